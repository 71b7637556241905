// Recognition when none is configured or installed (DESIGN.md "Calls from a
// browser": "with neither, each caller utterance cut by the VAD is a caller
// line `(speech not recognised)`"). Every utterance yields one final result
// with that text, marked not recognised, so the dialogue still moves on.
import { AsyncQueue } from '../../lib/async-queue.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream, SpeechToText } from './interface.js';

export const NOT_RECOGNISED = '(speech not recognised)';

export class UnrecognisedSpeech implements SpeechToText {
  readonly name = 'none';
  readonly streaming = false;

  open(options: RecognitionOptions): RecognitionStream {
    const results = new AsyncQueue<RecognitionResult>();
    let samples = 0;
    let utteranceStart = 0;
    options.signal.addEventListener('abort', () => results.end(), { once: true });
    return {
      write(pcm) {
        samples += pcm.length;
      },
      endUtterance() {
        const endMs = Math.round(samples / 8);
        results.push({ text: NOT_RECOGNISED, final: true, startMs: utteranceStart, endMs, recognised: false });
        utteranceStart = endMs;
      },
      results,
      async close() {
        results.end();
      },
    };
  }
}
