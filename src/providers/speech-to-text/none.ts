// No recogniser (DESIGN "Calls from a browser": no STT configured and no
// pocketsphinx): each utterance the VAD cuts becomes one final result
// "(speech not recognised)", which the dialogue engine answers as an unknown
// request. Not a sandbox of a real provider: it recognises nothing.
import type { RecognitionOptions, RecognitionResult, RecognitionStream, SpeechToText } from './interface.js';

export const NOT_RECOGNISED = '(speech not recognised)';

export class NoRecognition implements SpeechToText {
  readonly name = 'none';
  readonly streaming = false;

  open(options: RecognitionOptions): RecognitionStream {
    let samples = 0;
    let utteranceStart = 0;
    const queue: RecognitionResult[] = [];
    let wake: (() => void) | null = null;
    let closed = false;
    const close = () => {
      closed = true;
      wake?.();
    };
    options.signal.addEventListener('abort', close, { once: true });
    return {
      write(pcm) {
        samples += pcm.length;
      },
      endUtterance() {
        const endMs = Math.round(samples / 8);
        queue.push({ text: NOT_RECOGNISED, final: true, startMs: utteranceStart, endMs });
        utteranceStart = endMs;
        wake?.();
      },
      results: {
        async *[Symbol.asyncIterator]() {
          for (;;) {
            const next = queue.shift();
            if (next) {
              yield next;
              continue;
            }
            if (closed) return;
            await new Promise<void>((resolve) => (wake = resolve));
            wake = null;
          }
        },
      },
      async close() {
        close();
      },
    };
  }
}
