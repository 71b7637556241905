// No recogniser (DESIGN "Calls from a browser": no STT configured and no
// pocketsphinx): each utterance the VAD cuts becomes one final result
// "(speech not recognised)", which the dialogue engine answers as an unknown
// request. Not a sandbox of a real provider: it recognises nothing.
import type { RecognitionOptions, RecognitionStream, SpeechToText } from './interface.js';
import { textPerUtterance } from './text-per-utterance.js';

export const NOT_RECOGNISED = '(speech not recognised)';

export class NoRecognition implements SpeechToText {
  readonly name = 'none';
  readonly streaming = false;

  open(options: RecognitionOptions): RecognitionStream {
    return textPerUtterance(options, () => ({ text: NOT_RECOGNISED }));
  }
}
