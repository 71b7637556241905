// The sandbox carrier's calls when no recogniser is installed (DESIGN.md
// "Sandbox carrier"): each utterance our VAD cuts yields the next line the
// simulated caller has begun to speak, marked `recognised: false` (the
// transcript says so), or empty text when it has said nothing new (a line
// the VAD cut in two). Not recognition: the caller's own words, handed over
// in process by the carrier that speaks them.
import type { SimulatedCaller } from '../telephony/interface.js';
import type { RecognitionOptions, RecognitionStream, SpeechToText } from './interface.js';
import { textPerUtterance } from './text-per-utterance.js';

export class CallerWords implements SpeechToText {
  readonly name = 'sandbox-caller-words';
  readonly streaming = false;

  constructor(private readonly caller: SimulatedCaller) {}

  open(options: RecognitionOptions): RecognitionStream {
    const caller = this.caller;
    let used = 0;
    return textPerUtterance(options, () => {
      const spoken = caller.spoken();
      // The newest line begun: lines the VAD never cut on their own (spoken over) are passed by.
      const text = spoken.length > used ? spoken[spoken.length - 1]! : '';
      used = spoken.length;
      return { text, recognised: false };
    });
  }
}
