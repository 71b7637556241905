// A worker thread of ExtractionPool: reads files, slices and chunks their
// text, away from the event loop that answers every other request. It runs
// under the heap limit the pool gives it; the pool stops it past the time
// limit.
import { parentPort } from 'node:worker_threads';
import { ExtractionError, type PrepareOptions, prepareFile } from './extract.js';

export interface ExtractionJob {
  id: number;
  name: string;
  bytes: Uint8Array;
  declaredType: string;
  options: PrepareOptions;
}

export type ExtractionAnswer =
  | { ready: true }
  | { id: number; ok: true; result: Awaited<ReturnType<typeof prepareFile>> }
  | { id: number; ok: false; kind: ExtractionError['kind'] | 'failed'; message: string };

// The extractors are loaded before the worker says it is ready, so a file's
// time limit measures reading it, not loading the parsers (~0.3 s).
await Promise.all([
  import('file-type'),
  import('unpdf'),
  import('mammoth'),
  import('linkedom'),
  import('@mozilla/readability'),
]);

parentPort?.on('message', async (job: ExtractionJob) => {
  let answer: ExtractionAnswer;
  try {
    const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
    answer = { id: job.id, ok: true, result: await prepareFile(job.name, bytes, job.declaredType, job.options) };
  } catch (error) {
    answer =
      error instanceof ExtractionError
        ? { id: job.id, ok: false, kind: error.kind, message: error.message }
        : { id: job.id, ok: false, kind: 'failed', message: error instanceof Error ? error.message : String(error) };
  }
  parentPort?.postMessage(answer);
});
parentPort?.postMessage({ ready: true });
