// The built-in voice agent: speech recognition, the language model and the
// timing of turns on live calls (docs/decisions/voice-agent-providers.md).
import { choice, flag, integer, optional, section, text, urlWithDefault } from './declare.js';
import type { Config, VoiceAgentConfig } from './types.js';

const STT_PROVIDERS = ['deepgram', 'openai', 'pocketsphinx', 'none'] as const;

const v = {
  sttProvider: choice(
    'STT_PROVIDER',
    STT_PROVIDERS,
    'Speech recognition on calls: `deepgram`, `openai`, `pocketsphinx` or `none`',
    '`deepgram` with `DEEPGRAM_API_KEY`, else `openai` with `STT_URL`, else `pocketsphinx` when installed, else none',
  ),
  deepgramKey: optional(
    'DEEPGRAM_API_KEY',
    'Deepgram live transcription of calls (streamed μ-law 8 kHz, interim results)',
  ),
  deepgramBase: urlWithDefault(
    'DEEPGRAM_API_BASE',
    'wss://api.deepgram.com',
    ['wss:', 'ws:'],
    'Deepgram WebSocket origin (tests point it at a local Deepgram-speaking server)',
  ),
  sttUrl: optional(
    'STT_URL',
    'API base of an OpenAI-compatible transcription server (`https://api.openai.com/v1`, `http://127.0.0.1:8080/v1` for a local Whisper server); requests go to `…/audio/transcriptions`, one per caller utterance',
  ),
  sttApiKey: optional('STT_API_KEY', 'Bearer key for `STT_URL`, if it needs one'),
  sttModel: text('STT_MODEL', 'whisper-1', 'Model name sent with each transcription'),
  llmUrl: optional(
    'LLM_URL',
    'API base of an OpenAI-compatible chat server (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` for Ollama, vLLM, llama.cpp); requests go to `…/chat/completions`, streamed, with tools. Unset: the deterministic sandbox dialogue engine answers calls',
  ),
  llmApiKey: optional('LLM_API_KEY', 'Bearer key for `LLM_URL`, if it needs one'),
  llmModel: text('LLM_MODEL', 'gpt-4o-mini', 'Model name sent with each chat request (e.g. `llama3.2` for Ollama)'),
  endpointMinMs: integer(
    'VOICE_ENDPOINT_MIN_MS',
    500,
    100,
    10_000,
    "Silence after a caller's sentence before the agent answers (100 to 10,000; not above the maximum)",
  ),
  endpointMaxMs: integer(
    'VOICE_ENDPOINT_MAX_MS',
    3000,
    100,
    30_000,
    "Longest silence waited for before a caller's turn ends (100 to 30,000)",
  ),
  bargeInMs: integer('VOICE_BARGE_IN_MS', 300, 60, 5000, 'Caller speech over the agent that stops it (60 to 5,000)'),
  llmDeadlineMs: integer(
    'VOICE_LLM_DEADLINE_MS',
    4000,
    500,
    60_000,
    "Wait for the language model's first word before one retry, then an apology (500 to 60,000)",
  ),
  askModelAhead: flag(
    'VOICE_ASK_MODEL_AHEAD',
    "Ask the model as soon as the caller's words are final, before the end-of-turn silence has run out (about 300 ms sooner; an answer the caller talks over is cancelled unheard, its tokens spent). 0 waits for the turn's end",
    true,
  ),
  repromptMs: integer(
    'VOICE_REPROMPT_MS',
    8000,
    1000,
    120_000,
    'Silence after the agent\'s last heard words before "Are you still there?" (1,000 to 120,000)',
  ),
  maxReprompts: integer('VOICE_MAX_REPROMPTS', 2, 0, 10, 'Reprompts before a silent call ends (0 to 10)'),
};

export const voiceSection = section<Pick<Config, 'voiceAgent' | 'voice'>>(
  'Voice agent (real calls)',
  v,
  (read, { problem, url }) => {
    const deepgramKey = read(v.deepgramKey);
    const deepgramBase = read(v.deepgramBase).replace(/\/+$/, '');
    const sttUrl = read(v.sttUrl)?.replace(/\/+$/, '') ?? null;
    if (sttUrl) url('STT_URL', sttUrl, ['http:', 'https:']);
    const llmUrl = read(v.llmUrl)?.replace(/\/+$/, '') ?? null;
    if (llmUrl) url('LLM_URL', llmUrl, ['http:', 'https:']);
    const sttProvider: VoiceAgentConfig['sttProvider'] =
      read(v.sttProvider) ?? (deepgramKey ? 'deepgram' : sttUrl ? 'openai' : null);
    if (sttProvider === 'deepgram' && !deepgramKey) problem('STT_PROVIDER=deepgram needs DEEPGRAM_API_KEY');
    if (sttProvider === 'openai' && !sttUrl)
      problem('STT_PROVIDER=openai needs STT_URL (an OpenAI-compatible API base such as https://api.openai.com/v1)');

    const voice = {
      endpointMinMs: read(v.endpointMinMs),
      endpointMaxMs: read(v.endpointMaxMs),
      bargeInMs: read(v.bargeInMs),
      llmDeadlineMs: read(v.llmDeadlineMs),
      askModelAhead: read(v.askModelAhead),
      repromptMs: read(v.repromptMs),
      maxReprompts: read(v.maxReprompts),
    };
    if (voice.endpointMinMs > voice.endpointMaxMs)
      problem(
        `VOICE_ENDPOINT_MIN_MS (${voice.endpointMinMs}) must not exceed VOICE_ENDPOINT_MAX_MS (${voice.endpointMaxMs})`,
      );
    return {
      voiceAgent: {
        sttProvider,
        deepgram: deepgramKey ? { apiKey: deepgramKey, apiBase: deepgramBase } : null,
        openaiStt: sttUrl ? { url: sttUrl, apiKey: read(v.sttApiKey), model: read(v.sttModel) } : null,
        llm: llmUrl ? { url: llmUrl, apiKey: read(v.llmApiKey), model: read(v.llmModel) } : null,
        llmDeadlineMs: voice.llmDeadlineMs,
      },
      voice,
    };
  },
  'Read only when the built-in voice agent carries calls (see [real calls](guides/real-calls.md)); Twilio and ElevenLabs are in their sections above.',
);
