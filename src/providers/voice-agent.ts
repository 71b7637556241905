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

export function createVoiceAgentProviders(config: VoiceAgentConfig, voice: VoiceProviders, options: VoiceAgentOptions = {}): VoiceAgentProviders {
  let speechToText: SpeechToText | null = null;
  let sttName = 'none (set DEEPGRAM_API_KEY or STT_URL, or install pocketsphinx)';
  if (config.sttProvider === 'deepgram' && config.deepgram) {
    // 60 ms of audio per message: a third of the sends of one per 20 ms frame (DeepgramConfig.chunkMs).
    speechToText = new DeepgramSpeechToText({ chunkMs: 60, ...config.deepgram });
    sttName = `deepgram (${config.deepgram.apiBase})`;
  } else if (config.sttProvider === 'openai' && config.openaiStt) {
    speechToText = new OpenAiSpeechToText(config.openaiStt);
    sttName = `OpenAI-compatible transcription at ${config.openaiStt.url} (${config.openaiStt.model})`;
  } else if (config.sttProvider === 'pocketsphinx' || config.sttProvider === null) {
    speechToText = options.pocketsphinx?.() ?? null;
    if (speechToText) sttName = 'pocketsphinx (offline)';
    else if (config.sttProvider === 'pocketsphinx') sttName = 'none (STT_PROVIDER=pocketsphinx but pocketsphinx is not installed)';
  } else if (config.sttProvider === 'none') sttName = 'none (STT_PROVIDER=none)';

  const languageModel = config.llm ? new OpenAiLanguageModel(config.llm) : null;
  const elevenlabs = voice.external instanceof ElevenLabsVoiceProvider ? new ElevenLabsCallSpeech(voice.external) : null;
  const parts = [
    `speech to text: ${sttName}`,
    `model: ${config.llm ? `OpenAI-compatible chat at ${config.llm.url} (${config.llm.model})` : 'sandbox dialogue engine (set LLM_URL)'}`,
    `speech: espeak-ng${elevenlabs ? ' + elevenlabs' : ''}`,
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
