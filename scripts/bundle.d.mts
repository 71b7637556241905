// Types of scripts/bundle.mjs (plain JavaScript, run by build-if-stale.mjs) for the tests that import it.
export function bundle(): Promise<void>;
/** Throws, naming the line, when the text holds a character beyond Latin-1. */
export function checkOneByteSource(text: string): void;
