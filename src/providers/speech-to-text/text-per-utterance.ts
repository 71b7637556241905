// A recognition stream that hears no audio: each utterance our VAD cuts is
// answered with text decided elsewhere (NoRecognition's "(speech not
// recognised)", the sandbox caller's own words). One final result per
// utterance, with its times; the stream ends on abort or close.
import { AsyncQueue } from '../../lib/async-queue.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream } from './interface.js';

export function textPerUtterance(
  options: RecognitionOptions,
  textOf: () => Pick<RecognitionResult, 'text' | 'recognised'>,
): RecognitionStream {
  const results = new AsyncQueue<RecognitionResult>();
  let samples = 0;
  let utteranceStart = 0;
  options.signal.addEventListener('abort', () => results.end(), { once: true });
  return {
    write(pcm) {
      samples += pcm.length;
    },
    // No audio is heard, so there is nothing to window: each cut answers for the time since the last.
    startUtterance() {},
    endUtterance() {
      const endMs = Math.round(samples / 8);
      results.push({ ...textOf(), final: true, startMs: utteranceStart, endMs });
      utteranceStart = endMs;
    },
    results,
    async close() {
      results.end();
    },
  };
}
