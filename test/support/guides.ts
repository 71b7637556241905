// The guides' walkthroughs as one shell script, as a newcomer pastes them: the
// `## Walkthrough` section of each guide in docs/guides/, in the order below,
// its blocks in the order they appear. A ```sh block is pasted as it is; a
// ```ts or ```js block whose first line is `// file: NAME` is saved as NAME
// (the guide says to save it) where it appears. The server's address is set
// once, by the `BASE=http://127.0.0.1:3000` line of the first guide.
import { readFileSync } from 'node:fs';

/** The guides that continue one shell, in the order a newcomer follows them (each uses what the ones before set). */
export const SHELL_GUIDES = [
  'accounts',
  'data',
  'telephony',
  'billing',
  'personas',
  'integrations',
  'knowledge',
  'connectors',
  'call-sessions',
  'webhooks',
  'temporary-calls',
  'real-calls',
  'analysis',
  'web-calls',
];

/**
 * The guides that stand alone: each signs up an account of its own and only keeps the shell's `$BASE`
 * (`BASE=${BASE:-...}`), so each runs in a shell and against a server of its own (test/guides-<guide>.test.ts),
 * side by side with the others.
 */
export const STANDALONE_GUIDES = ['pathways', 'campaigns', 'agent-tests'];

/** Every guide with a walkthrough, in the order a newcomer follows them. */
export const GUIDES = [...SHELL_GUIDES, ...STANDALONE_GUIDES];

export const DEFAULT_BASE = 'http://127.0.0.1:3000';
export const BASE_LINE = /^BASE=http:\/\/127\.0\.0\.1:3000\b.*$/m;

export const guidePath = (guide: string) => `docs/guides/${guide}.md`;

/** The text of a guide's `## Walkthrough…` section (up to the next `## ` heading). */
export function walkthroughSection(markdown: string, guide: string): string {
  const start = markdown.search(/^## Walkthrough\b/m);
  if (start < 0) throw new Error(`${guidePath(guide)} has no "## Walkthrough" section`);
  const next = markdown.slice(start + 3).search(/^## /m);
  return next < 0 ? markdown.slice(start) : markdown.slice(start, start + 3 + next);
}

export interface Block {
  lang: string;
  body: string;
  /** For a file block: the name it is saved as. */
  file?: string;
}

/** The fenced blocks of a text, in order. */
export function blocksOf(text: string): Block[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, lang, body]) => {
    const file = /^\/\/ file: ([\w.-]+)/.exec(body)?.[1];
    return { lang, body, file };
  });
}

/** The shell commands of every walkthrough, in order, against `base`. */
export function walkthroughScript(base: string, guides = GUIDES): string {
  const parts: string[] = [];
  for (const guide of guides) {
    parts.push(`# --- ${guidePath(guide)}`);
    for (const block of blocksOf(walkthroughSection(readFileSync(guidePath(guide), 'utf8'), guide))) {
      if (block.file) parts.push(`cat > ${block.file} <<'GUIDE_FILE'\n${block.body}GUIDE_FILE`);
      else if (block.lang === 'sh') parts.push(block.body);
    }
  }
  return parts.join('\n').replace(BASE_LINE, `BASE=${base}`);
}

// `npx tsx test/support/guides.ts [base] [guide …]` prints the script (to run a few guides by hand).
if (process.argv[1]?.endsWith('guides.ts')) {
  const [base = DEFAULT_BASE, ...guides] = process.argv.slice(2);
  process.stdout.write(walkthroughScript(base, guides.length ? guides : GUIDES));
}
