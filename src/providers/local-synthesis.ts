// One way to run a speech synthesiser installed on the machine (Debian's
// espeak-ng or flite): a child process per text, so the event loop never
// waits on synthesis; the text goes through a file, never through arguments,
// so a text that looks like an option is spoken, not obeyed.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export class SynthesisError extends Error {
  constructor(
    message: string,
    /** The synthesiser ran past its time limit (and was killed). */
    readonly timedOut: boolean,
  ) {
    super(message);
  }
}

/**
 * Runs `binary` with the arguments `args(input, output)` (a text file in, a
 * WAV file out) and answers the WAV's bytes. Throws a SynthesisError naming
 * what the synthesiser printed, or its time limit.
 */
export async function synthesizeWithBinary(
  binary: string,
  args: (input: string, output: string) => string[],
  text: string,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'synthesis-'));
  try {
    const input = join(dir, 'text.txt');
    const output = join(dir, 'speech.wav');
    await writeFile(input, text);
    await new Promise<void>((resolve, reject) => {
      execFile(
        binary,
        args(input, output),
        { timeout: options.timeoutMs, signal: options.signal, killSignal: 'SIGKILL' },
        (err, stdout, stderr) => {
          if (!err) return resolve();
          // espeak-ng prints some errors (an unknown voice) on standard output.
          const said = `${String(stderr)} ${String(stdout)}`.replace(/\s+/g, ' ').trim().slice(-200);
          reject(
            err.killed
              ? new SynthesisError(`took longer than ${options.timeoutMs} ms`, true)
              : new SynthesisError(said || err.message, false),
          );
        },
      );
    });
    return await readFile(output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
