// Picks the live voice agent's providers from config (DESIGN.md "Voice
// agent"), as createProviders does for the others: speech to text (Deepgram,
// an OpenAI-compatible server, pocketsphinx, or none), the language model (an
// OpenAI-compatible server, or null: the sandbox dialogue engine answers) and
// call speech (ElevenLabs when its key is set; the local espeak-ng voice
// always). Speech reuses the persona providers, so one espeak-ng worker and
// one ElevenLabs adapter serve previews and calls.
import type { VoiceAgentConfig } from '../config.js';
import { ElevenLabsCallSpeech } from './call-speech/elevenlabs.js';
import type { CallSpeech } from './call-speech/interface.js';
import { LocalCallSpeech } from './call-speech/local.js';
import type { LanguageModel } from './language-model/interface.js';
import { OpenAiLanguageModel } from './language-model/openai.js';
import { DeepgramSpeechToText } from './speech-to-text/deepgram.js';
import type { SpeechToText } from './speech-to-text/interface.js';
import { OpenAiSpeechToText } from './speech-to-text/openai.js';
import { ElevenLabsVoiceProvider } from './voice/elevenlabs.js';
import type { VoiceProviders } from './voice/interface.js';

export interface VoiceAgentProviders {
  /** null: no recogniser (each caller utterance is "(speech not recognised)"). */
  speechToText: SpeechToText | null;
  /** null: the sandbox dialogue engine answers. */
  languageModel: LanguageModel | null;
  callSpeech: { elevenlabs: CallSpeech | null; local: CallSpeech };
  /** Longest wait for the model's first token before one retry. */
  llmDeadlineMs: number;
  /** One line for the start-up log. */
  readonly name: string;
  /** Closes pooled connections (the persona providers close their own). */
  close(): Promise<void>;
}

export interface VoiceAgentOptions {
  /** Builds the pocketsphinx recogniser; returns null when pocketsphinx is not installed. */
  pocketsphinx?: () => SpeechToText | null;
}

export function createVoiceAgentProviders(
  config: VoiceAgentConfig,
  voice: VoiceProviders,
  options: VoiceAgentOptions = {},
): VoiceAgentProviders {
  let speechToText: SpeechToText | null = null;
  // Each part says what the agent will use and why: a configured provider, or the offline fallback.
  let sttName =
    'none: each caller utterance is "(speech not recognised)" (set DEEPGRAM_API_KEY or STT_URL, or install Debian\'s pocketsphinx)';
  if (config.sttProvider === 'deepgram' && config.deepgram) {
    // 200 ms of audio per message (Deepgram advises 20-250 ms): a tenth of the sends of one per 20 ms frame
    // (DeepgramConfig.chunkMs); what is held goes out before Finalize, so a cut waits for none of it.
    speechToText = new DeepgramSpeechToText({ chunkMs: 200, ...config.deepgram });
    sttName = `Deepgram streaming at ${config.deepgram.apiBase} (DEEPGRAM_API_KEY is set)`;
  } else if (config.sttProvider === 'openai' && config.openaiStt) {
    speechToText = new OpenAiSpeechToText(config.openaiStt);
    sttName = `OpenAI-compatible transcription at ${config.openaiStt.url}, model ${config.openaiStt.model} (STT_URL is set)`;
  } else if (config.sttProvider === 'pocketsphinx' || config.sttProvider === null) {
    speechToText = options.pocketsphinx?.() ?? null;
    if (speechToText)
      sttName = `pocketsphinx, offline (${config.sttProvider === 'pocketsphinx' ? 'STT_PROVIDER=pocketsphinx' : 'the offline fallback: no DEEPGRAM_API_KEY or STT_URL'})`;
    else if (config.sttProvider === 'pocketsphinx')
      sttName =
        'none: STT_PROVIDER=pocketsphinx but pocketsphinx is not installed (apt-get install pocketsphinx pocketsphinx-en-us)';
  } else if (config.sttProvider === 'none')
    sttName = 'none: each caller utterance is "(speech not recognised)" (STT_PROVIDER=none)';

  const languageModel = config.llm ? new OpenAiLanguageModel(config.llm) : null;
  const elevenlabs =
    voice.external instanceof ElevenLabsVoiceProvider ? new ElevenLabsCallSpeech(voice.external) : null;
  const espeak = (voice.local as { binary?: string | null }).binary
    ? `espeak-ng (${(voice.local as { binary?: string | null }).binary})`
    : "espeak-ng (its WebAssembly build: Debian's espeak-ng is not installed)";
  const parts = [
    `recognition: ${sttName}`,
    `model: ${config.llm ? `OpenAI-compatible chat at ${config.llm.url}, model ${config.llm.model} (LLM_URL is set)` : 'the sandbox dialogue engine (the offline fallback: LLM_URL is not set)'}`,
    `voice: the persona's; local personas (the default, local-amy) speak with ${espeak}, ElevenLabs personas ${elevenlabs ? 'with ElevenLabs (ELEVENLABS_API_KEY is set)' : 'with espeak-ng too (ELEVENLABS_API_KEY is not set)'}`,
  ];
  return {
    speechToText,
    languageModel,
    callSpeech: { elevenlabs, local: new LocalCallSpeech(voice.local) },
    llmDeadlineMs: config.llmDeadlineMs,
    name: parts.join('; '),
    close: async () => {
      const closable = [speechToText, languageModel] as Array<{ close?: () => Promise<void> } | null>;
      await Promise.all(closable.map((p) => p?.close?.()));
    },
  };
}
