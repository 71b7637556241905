// One utterance decoded while the caller speaks (docs/decisions/offline-speech.md
// "Decoding as the caller speaks"): a `pocketsphinx_batch` process started at
// the start of speech reads raw 16 kHz PCM from a FIFO of the call's directory
// as it is written and decodes it as it comes (its ps_decode_raw streams from a
// file it cannot seek), so after the cut only the last fraction of a second and
// the second pass are left. The ctl file names the FIFO: Node's child stdin is
// a socket, which pocketsphinx cannot open by name.
//
// Streaming decoding normalises the cepstrum with a running mean started from
// `-cmninit` (the model's feat.params asks for a mean over the whole utterance,
// which only a whole file allows); the model's own initial mean is far from
// the phone band's, so each call starts from a measured one and then carries
// the mean of its previous utterance (cmnAfter).
import { type ChildProcess, spawn } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { ProviderFailure } from '../failure.js';

/**
 * Initial cepstral means measured here (docs/decisions/offline-speech.md): the
 * mean over the default script's lines spoken by flite (kal) and espeak-ng
 * through 8 kHz μ-law and back; and over flite slt, rms and espeak-ng at
 * 16 kHz for browser calls.
 */
export const PHONE_CMN_INIT = '57.2,6.0,4.3,13.8,-0.7,-5.0,-2.0,-3.6,-13.7,3.3,-5.8,3.3,-6.4';
export const WIDEBAND_CMN_INIT = '53.7,0.2,8.6,26.6,-2.1,0.4,3.9,-9.2,-2.4,-8.0,10.3,0.0,0.9';
/** Audio queued for a decoder that does not keep up (10 s at 16 kHz); past it the live decode is given up and the utterance decoded whole after its cut. */
const MAX_BACKLOG_BYTES = 10 * 16_000 * 2;
/** How often the FIFO is tried while the decoder loads its model and has not opened it yet. */
const OPEN_RETRY_MS = 5;

/** 8 kHz → 16 kHz chunk by chunk, sample for sample what `resample` gives the whole (it holds back one sample). */
export class Upsampler2x {
  private held: number | null = null;

  push(pcm: Int16Array): Int16Array {
    if (pcm.length === 0) return pcm;
    const out = new Int16Array((pcm.length - (this.held === null ? 1 : 0)) * 2);
    let o = 0;
    let previous = this.held ?? pcm[0]!;
    for (let i = this.held === null ? 1 : 0; i < pcm.length; i++) {
      const next = pcm[i]!;
      out[o++] = previous;
      out[o++] = Math.round(previous + (next - previous) * 0.5);
      previous = next;
    }
    this.held = previous;
    return out;
  }

  /** The last sample, repeated as `resample` ends. */
  flush(): Int16Array {
    if (this.held === null) return new Int16Array(0);
    const out = new Int16Array([this.held, this.held]);
    this.held = null;
    return out;
  }
}

let modelFeatParams: Promise<string> | null = null;

/** The model's feat.params with another initial cepstral mean. */
async function featParamsWith(modelDir: string, cmnInit: string): Promise<string> {
  modelFeatParams ??= readFile(join(modelDir, 'en-us', 'feat.params'), 'utf8');
  modelFeatParams.catch(() => (modelFeatParams = null));
  const params = await modelFeatParams;
  return /^-cmninit .*$/m.test(params)
    ? params.replace(/^-cmninit .*$/m, `-cmninit ${cmnInit}`)
    : `${params.trimEnd()}\n-cmninit ${cmnInit}\n`;
}

export interface LiveDecoderOptions {
  binary: string;
  modelDir: string;
  /** The call's directory: it holds `live.raw` (a FIFO), `live.ctl` and the dictionary. */
  dir: string;
  /** Search and decoder options (`-lm …`, beams). */
  args: string[];
  /** 8000: PCM is upsampled on the way; 16000: as it is. */
  sampleRate: 8000 | 16000;
  cmnInit: string;
}

export interface LiveResult {
  text: string;
  /** The running cepstral mean at the end of the utterance (the next one's -cmninit), when the log gave it. */
  cmnAfter: string | null;
}

/** Files of a call's directory the live decoder uses; prepared once per call (the FIFO with mkfifo). */
export const LIVE_FILES = {
  fifo: 'live.raw',
  ctl: 'live.ctl',
  hyp: 'live.hyp',
  log: 'live.log',
  featParams: 'live.feat.params',
};

export class LiveDecoder {
  private readonly child: ChildProcess;
  private readonly exited: Promise<{ code: number | null; error?: Error }>;
  private input: Socket | null = null;
  private waiting: Buffer[] = [];
  private openTimer: NodeJS.Timeout | null = null;
  private readonly upsampler: Upsampler2x | null;
  private ending = false;
  private killed = false;
  /** The decoder fell behind by more than MAX_BACKLOG_BYTES, or its input failed: its result is not used. */
  behind = false;

  private constructor(private readonly options: LiveDecoderOptions) {
    this.upsampler = options.sampleRate === 8000 ? new Upsampler2x() : null;
    const { dir } = options;
    const args = [
      '-hmm',
      join(options.modelDir, 'en-us'),
      '-dict',
      join(dir, 'words.dict'),
      ...options.args,
      '-featparams',
      join(dir, LIVE_FILES.featParams),
      '-adcin',
      'yes',
      '-adchdr',
      '0',
      '-cepdir',
      dir,
      '-cepext',
      '.raw',
      '-ctl',
      join(dir, LIVE_FILES.ctl),
      '-hyp',
      join(dir, LIVE_FILES.hyp),
      '-logfn',
      join(dir, LIVE_FILES.log),
    ];
    this.child = spawn(options.binary, args, { stdio: 'ignore' });
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => resolve({ code: null, error }));
      this.child.once('exit', (code) => resolve({ code }));
    });
    void this.exited.then(() => this.stopOpening());
    this.tryOpen();
  }

  /** Starts a decoder for one utterance (its files written first). */
  static async start(options: LiveDecoderOptions): Promise<LiveDecoder> {
    await Promise.all([
      rm(join(options.dir, LIVE_FILES.hyp), { force: true }),
      rm(join(options.dir, LIVE_FILES.log), { force: true }),
    ]);
    await writeFile(join(options.dir, LIVE_FILES.featParams), await featParamsWith(options.modelDir, options.cmnInit));
    return new LiveDecoder(options);
  }

  /** Caller audio at the stream's rate, in order. */
  write(pcm: Int16Array): void {
    if (this.ending || this.killed || pcm.length === 0) return;
    this.send(this.upsampler ? this.upsampler.push(pcm) : pcm);
  }

  /** 16 kHz samples the decoder hears as they are (the silence around an utterance). */
  writeSilence(samples: number): void {
    if (!this.ending && !this.killed) this.send(new Int16Array(samples));
  }

  /**
   * No more audio: the decoder finishes the utterance. Resolves with its words;
   * rejects with a ProviderFailure when it fails or takes more than timeoutMs.
   */
  async finish(timeoutMs: number, trailingSilence: number): Promise<LiveResult> {
    if (this.upsampler) this.send(this.upsampler.flush());
    this.send(new Int16Array(trailingSilence));
    this.ending = true;
    this.endInput();
    const timer = setTimeout(() => this.kill(), timeoutMs);
    const { code, error } = await this.exited.finally(() => clearTimeout(timer));
    if (this.killed) throw new ProviderFailure('pocketsphinx', `decoding took longer than ${timeoutMs} ms`);
    const { dir } = this.options;
    const log = await readFile(join(dir, LIVE_FILES.log), 'utf8').catch(() => '');
    if (error || code !== 0)
      throw new ProviderFailure(
        'pocketsphinx',
        `decoder failed: ${
          error?.message ??
          (log
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('ERROR'))
            .at(-1)
            ?.slice(-200) ||
            `exit ${code}`)
        }`,
      );
    const line = (await readFile(join(dir, LIVE_FILES.hyp), 'utf8').catch(() => '')).trim();
    // "words (uttid score)": the words are everything before the last parenthesis.
    const text = line.replace(/\s*\([^()]*\)\s*$/, '').replace(/\(\d+\)/g, '');
    const update = [...log.matchAll(/Update to\s*<([^>]*)>/g)].at(-1)?.[1]?.trim().split(/\s+/);
    const cmnAfter =
      update && update.length === 13 && update.every((v) => Number.isFinite(Number(v))) ? update.join(',') : null;
    return { text, cmnAfter };
  }

  /**
   * Stops the process and resolves once it has exited: only then is the
   * call's FIFO free for the next utterance's decoder (a dying reader would
   * take its audio, and leave the next one waiting for a writer).
   */
  async stop(): Promise<void> {
    this.kill();
    await this.exited;
  }

  /** Stops the process at once (the call ended, the utterance is decoded another way). */
  kill(): void {
    if (this.killed) return;
    this.killed = true;
    this.stopOpening();
    this.input?.destroy();
    this.waiting = [];
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private send(pcm: Int16Array): void {
    if (pcm.length === 0 || this.behind) return;
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    if (!this.input) {
      this.waiting.push(Buffer.from(bytes));
      return;
    }
    if (this.input.writableLength > MAX_BACKLOG_BYTES) {
      this.behind = true;
      return;
    }
    this.input.write(Buffer.from(bytes));
  }

  /**
   * Opens the FIFO for writing once the decoder has opened it for reading
   * (until then an open fails with ENXIO and audio waits here): opening it
   * earlier for reading and writing would let an early close lose the audio
   * and leave the decoder waiting for a writer.
   */
  private tryOpen(): void {
    this.openTimer = null;
    if (this.killed || this.child.exitCode !== null) return;
    let fd: number;
    try {
      fd = openSync(join(this.options.dir, LIVE_FILES.fifo), constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENXIO')
        this.openTimer = setTimeout(() => this.tryOpen(), OPEN_RETRY_MS);
      else this.behind = true;
      return;
    }
    const input = new Socket({ fd, readable: false, writable: true });
    input.on('error', () => (this.behind = true));
    this.input = input;
    for (const bytes of this.waiting.splice(0)) input.write(bytes);
    if (this.ending) this.endInput();
  }

  private endInput(): void {
    // The decoder sees the end of its file once the only writer closes, after what was written is read.
    this.input?.destroySoon();
  }

  private stopOpening(): void {
    if (this.openTimer) clearTimeout(this.openTimer);
    this.openTimer = null;
  }
}
