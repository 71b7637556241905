// Local speech: espeak-ng, writing a 16-bit mono 22,050 Hz WAV. Debian's
// `espeak-ng` command when it is installed (a child process per text, about
// 0.1 s a sentence), else the same synthesiser compiled to WebAssembly (the
// `espeak-ng` npm package, installed by `npm install`, nothing downloaded at
// run time), which needs about 1 s a sentence here to start a fresh instance.
//
// The WASM build runs synchronously, so it runs in a worker thread: a long
// text never blocks the event loop. Each job gets a fresh espeak-ng instance
// (its own memory and file system) from one compiled module; the worker
// starts on first use and is restarted after a crash or a timeout.
//
// Every job goes through one queue (./speech-queue.ts): a call's sentences
// before previews, room for every call, previews only in spare room and a few
// per account.
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AppError } from '../../http/errors.js';
import { SynthesisError, synthesizeWithBinary } from '../local-synthesis.js';
import { findBinary } from '../speech-to-text/pocketsphinx.js';
import type { SpeechProvider, SynthesizedAudio, VoiceSettings } from './interface.js';
import { type SpeechRequest, SpeechQueue, defaultSpeechQueueLimits } from './speech-queue.js';

/** espeak-ng voice names: a language tag with an optional variant (en-us, en-gb+f3, en-gb-x-rp+m3). */
const VOICE_NAME = /^[a-z]{2,3}(?:-[a-z0-9]{1,8})*(?:\+[A-Za-z0-9]{1,16})?$/i;

export interface LocalSpeechOptions {
  /** Longest a job may take once it runs before the worker is restarted (default 30 s). */
  timeoutMs?: number;
  /** Call jobs queued or running for one call; more are refused with 429 (default 4). There is no total for calls. */
  maxPendingPerCall?: number;
  /** Jobs of both classes queued or running below which previews are admitted (default 8): the spare room. */
  spareRoom?: number;
  /** Preview jobs queued or running at once, all accounts together (default 4); also only while all jobs stay under spareRoom. */
  maxPreviews?: number;
  /** Preview jobs queued or running for one account (default 2). */
  maxPreviewsPerAccount?: number;
  /** Jobs run at once (default: 1 for the WebAssembly worker, which runs one at a time; the cores for the command). */
  concurrency?: number;
  /** The espeak-ng command (default: `espeak-ng` on PATH); null uses the WebAssembly build. */
  binary?: string | null;
}

interface Job {
  resolve(audio: SynthesizedAudio): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

// CommonJS, evaluated in the worker. Messages: { id, args, text } → { id, wav } | { id, error }.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
let ready = null;
function load() {
  ready ??= Promise.all([
    import(workerData.moduleUrl).then((m) => m.default),
    WebAssembly.compile(readFileSync(new URL('espeak-ng.wasm', workerData.moduleUrl))),
  ]);
  return ready;
}
parentPort.on('message', async ({ id, args, text }) => {
  try {
    const [ESpeakNg, wasm] = await load();
    const errors = [];
    const instance = await ESpeakNg({
      arguments: [...args, '-f', 'input.txt', '-w', 'output.wav'],
      preRun: [(m) => m.FS.writeFile('input.txt', text)],
      print: () => {},
      printErr: (line) => { if (!line.startsWith('program exited')) errors.push(line); },
      instantiateWasm: (imports, done) => {
        WebAssembly.instantiate(wasm, imports).then((inst) => done(inst, wasm));
        return {};
      },
    });
    let wav = null;
    try { wav = instance.FS.readFile('output.wav'); } catch {}
    if (!wav || wav.length <= 44) parentPort.postMessage({ id, error: errors.join(' ') || 'espeak-ng wrote no audio' });
    else parentPort.postMessage({ id, wav }, [wav.buffer]);
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

/** Where the espeak-ng package is, as a file URL; throws when it is not installed. */
export function locateEspeakNg(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('espeak-ng')).href;
}

export class LocalSpeechProvider implements SpeechProvider {
  readonly name = 'espeak-ng';
  private worker: Worker | null = null;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  private readonly timeoutMs: number;
  /** Debian's espeak-ng when installed; null: the WebAssembly build. */
  readonly binary: string | null;
  /** The one queue every local speech job waits in. */
  readonly queue: SpeechQueue;

  constructor(options: LocalSpeechOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.binary = options.binary === undefined ? findBinary('espeak-ng') : options.binary;
    const concurrency = options.concurrency ?? (this.binary ? availableParallelism() : 1);
    const defaults = defaultSpeechQueueLimits(concurrency);
    this.queue = new SpeechQueue({
      ...defaults,
      maxPendingPerCall: options.maxPendingPerCall ?? defaults.maxPendingPerCall,
      spareRoom: options.spareRoom ?? defaults.spareRoom,
      maxPreviews: options.maxPreviews ?? defaults.maxPreviews,
      maxPreviewsPerAccount: options.maxPreviewsPerAccount ?? defaults.maxPreviewsPerAccount,
    });
  }

  /** espeak-ng command-line arguments for the settings; refuses values that are not voice settings. */
  static argumentsFor(settings: VoiceSettings): string[] {
    if (!VOICE_NAME.test(settings.voiceId))
      throw new AppError('invalid_input', `"${settings.voiceId}" is not an espeak-ng voice name`);
    const args = ['-v', settings.voiceId];
    const numeric = (key: string, flag: string, min: number, max: number) => {
      const value = settings[key];
      if (value === undefined) return;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
        throw new AppError('invalid_input', `${key} must be a whole number from ${min} to ${max}`);
      args.push(flag, String(value));
    };
    numeric('speed', '-s', 80, 450);
    numeric('pitch', '-p', 0, 99);
    numeric('amplitude', '-a', 0, 200);
    numeric('wordGap', '-g', 0, 100);
    return args;
  }

  /**
   * Speaks `text` when the queue gives it its turn. Without `request` the job
   * counts as a call's speech: previews must say they are previews (and whose).
   */
  synthesize(
    text: string,
    settings: VoiceSettings,
    request: SpeechRequest = { priority: 'call' },
  ): Promise<SynthesizedAudio> {
    const args = LocalSpeechProvider.argumentsFor(settings);
    const binary = this.binary;
    return this.queue.run(request, () =>
      binary ? this.synthesizeWithCommand(binary, args, text, request.signal) : this.synthesizeInWorker(args, text),
    );
  }

  private synthesizeInWorker(args: string[], text: string): Promise<SynthesizedAudio> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise<SynthesizedAudio>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.restart(new AppError('provider_error', `local speech took longer than ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref();
      this.jobs.set(id, { resolve, reject, timer });
      // Hold the process open while a job runs; an idle worker does not.
      worker.ref();
      worker.postMessage({ id, args, text });
    });
  }

  private async synthesizeWithCommand(
    binary: string,
    args: string[],
    text: string,
    signal?: AbortSignal,
  ): Promise<SynthesizedAudio> {
    try {
      const wav = await synthesizeWithBinary(binary, (input, output) => [...args, '-f', input, '-w', output], text, {
        timeoutMs: this.timeoutMs,
        signal,
      });
      if (wav.length <= 44) throw new SynthesisError('espeak-ng wrote no audio', false);
      return { bytes: new Uint8Array(wav.buffer, wav.byteOffset, wav.byteLength), contentType: 'audio/wav' };
    } catch (err) {
      if (!(err instanceof SynthesisError)) throw err;
      throw new AppError(
        'provider_error',
        err.timedOut ? `local speech took longer than ${this.timeoutMs} ms` : `local speech failed: ${err.message}`,
      );
    }
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    const closing = new AppError('not_ready', 'local speech is shutting down');
    this.queue.clear(closing);
    this.failAll(closing);
    if (worker) await worker.terminate();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { moduleUrl: locateEspeakNg() } });
    worker.unref();
    worker.on('message', (message: { id: number; wav?: Uint8Array; error?: string }) => {
      const job = this.jobs.get(message.id);
      if (!job) return;
      this.jobs.delete(message.id);
      clearTimeout(job.timer);
      if (this.jobs.size === 0) worker.unref();
      if (message.wav) job.resolve({ bytes: new Uint8Array(message.wav), contentType: 'audio/wav' });
      else job.reject(new AppError('provider_error', `local speech failed: ${message.error ?? 'unknown error'}`));
    });
    worker.on('error', (err) => {
      if (this.worker === worker) this.restart(new AppError('provider_error', `local speech crashed: ${err.message}`));
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.restart(new AppError('provider_error', 'local speech stopped unexpectedly'));
    });
    this.worker = worker;
    return worker;
  }

  /** Fails every pending job and drops the worker; the next job starts a new one. */
  private restart(reason: Error): void {
    const worker = this.worker;
    this.worker = null;
    this.failAll(reason);
    void worker?.terminate();
  }

  private failAll(reason: Error): void {
    for (const job of this.jobs.values()) {
      clearTimeout(job.timer);
      job.reject(reason);
    }
    this.jobs.clear();
  }
}
