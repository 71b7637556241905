// The sandbox carrier's calls when no recogniser is installed (DESIGN.md
// "Sandbox carrier"): each utterance our VAD cuts yields the next line the
// simulated caller has begun to speak, marked `recognised: false` (the
// transcript says so), or empty text when it has said nothing new (a line
// the VAD cut in two). Not recognition: the caller's own words, handed over
// in process by the carrier that speaks them.
import type { SimulatedCaller } from '../telephony/interface.js';
import type { RecognitionOptions, RecognitionResult, RecognitionStream, SpeechToText } from './interface.js';

export class CallerWords implements SpeechToText {
  readonly name = 'sandbox-caller-words';
  readonly streaming = false;

  constructor(private readonly caller: SimulatedCaller) {}

  open(options: RecognitionOptions): RecognitionStream {
    const caller = this.caller;
    let samples = 0;
    let utteranceStart = 0;
    let used = 0;
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
        const spoken = caller.spoken();
        // The newest line begun: lines the VAD never cut on their own (spoken over) are passed by.
        const text = spoken.length > used ? spoken[spoken.length - 1]! : '';
        used = spoken.length;
        queue.push({ text, final: true, startMs: utteranceStart, endMs, recognised: false });
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
