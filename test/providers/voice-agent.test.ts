// The voice agent's provider variables (src/config.ts) and the factory that
// turns them into providers: which recogniser, model and voices a service
// gets, and that what it builds really talks to the configured servers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { DeepgramSpeechToText } from '../../src/providers/speech-to-text/deepgram.js';
import type { SpeechToText } from '../../src/providers/speech-to-text/interface.js';
import { OpenAiSpeechToText } from '../../src/providers/speech-to-text/openai.js';
import { OpenAiLanguageModel } from '../../src/providers/language-model/openai.js';
import { createVoiceProviders } from '../../src/providers/index.js';
import { createVoiceAgentProviders } from '../../src/providers/voice-agent.js';
import { type DeepgramFake, startDeepgramFake } from '../support/deepgram-fake.js';
import { type ElevenLabsFake, startElevenLabsFake } from '../support/elevenlabs-fake.js';
import { type OpenAiFake, startOpenAiFake, textAnswer } from '../support/openai-fake.js';
import { concat, drain, frames, silence, tone } from '../support/voice-audio.js';

const problemsOf = (env: Record<string, string>) => {
  try {
    loadConfig(env, '/srv');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};
const build = (env: Record<string, string>, pocketsphinx?: () => SpeechToText | null) => {
  const config = loadConfig(env, '/srv');
  return createVoiceAgentProviders(config.voiceAgent, createVoiceProviders(config.elevenlabs), { pocketsphinx });
};

describe('voice agent variables', () => {
  it('default to no recogniser choice, no model and a 4 s first-token deadline', () => {
    expect(loadConfig({}, '/srv').voiceAgent).toEqual({
      sttProvider: null,
      deepgram: null,
      openaiStt: null,
      llm: null,
      llmDeadlineMs: 4000,
    });
  });

  it('pick deepgram with a key, else openai with STT_URL; STT_PROVIDER overrides', () => {
    const both = { DEEPGRAM_API_KEY: 'dg', STT_URL: 'http://localhost:8080/v1/' };
    expect(loadConfig(both, '/srv').voiceAgent).toMatchObject({
      sttProvider: 'deepgram',
      deepgram: { apiKey: 'dg', apiBase: 'wss://api.deepgram.com' },
      openaiStt: { url: 'http://localhost:8080/v1', apiKey: null, model: 'whisper-1' },
    });
    expect(
      loadConfig(
        { STT_URL: 'https://api.openai.com/v1', STT_API_KEY: 'sk', STT_MODEL: 'gpt-4o-mini-transcribe' },
        '/srv',
      ).voiceAgent,
    ).toMatchObject({
      sttProvider: 'openai',
      openaiStt: { url: 'https://api.openai.com/v1', apiKey: 'sk', model: 'gpt-4o-mini-transcribe' },
    });
    expect(loadConfig({ ...both, STT_PROVIDER: 'openai' }, '/srv').voiceAgent.sttProvider).toBe('openai');
    expect(loadConfig({ ...both, STT_PROVIDER: 'None' }, '/srv').voiceAgent.sttProvider).toBe('none');
    expect(
      loadConfig({ LLM_URL: 'http://localhost:11434/v1', LLM_MODEL: 'llama3.2', VOICE_LLM_DEADLINE_MS: '2500' }, '/srv')
        .voiceAgent,
    ).toMatchObject({
      llm: { url: 'http://localhost:11434/v1', apiKey: null, model: 'llama3.2' },
      llmDeadlineMs: 2500,
    });
  });

  it('report every bad voice variable by name', () => {
    const problems = problemsOf({
      STT_PROVIDER: 'whisper',
      DEEPGRAM_API_BASE: 'https://api.deepgram.com',
      STT_URL: 'ftp://x',
      LLM_URL: 'nope',
      VOICE_LLM_DEADLINE_MS: '10',
    }).join('\n');
    for (const name of [
      'STT_PROVIDER must be one of deepgram, openai, pocketsphinx, none',
      'DEEPGRAM_API_BASE must be a wss: or ws: URL',
      'STT_URL must be',
      'LLM_URL must be',
      'VOICE_LLM_DEADLINE_MS must be',
    ]) {
      expect(problems).toContain(name);
    }
    expect(problemsOf({ STT_PROVIDER: 'deepgram' })).toEqual(['STT_PROVIDER=deepgram needs DEEPGRAM_API_KEY']);
    expect(problemsOf({ STT_PROVIDER: 'openai' })).toEqual([
      expect.stringContaining('STT_PROVIDER=openai needs STT_URL'),
    ]);
  });
});

describe('createVoiceAgentProviders', () => {
  it('builds the configured recogniser, or pocketsphinx when installed, or none', () => {
    expect(build({ DEEPGRAM_API_KEY: 'dg' }).speechToText).toBeInstanceOf(DeepgramSpeechToText);
    expect(build({ STT_URL: 'http://localhost:8080/v1' }).speechToText).toBeInstanceOf(OpenAiSpeechToText);
    const sphinx = {
      name: 'pocketsphinx',
      streaming: false,
      open: () => {
        throw new Error('unused');
      },
    } as SpeechToText;
    expect(build({}, () => sphinx).speechToText).toBe(sphinx);
    expect(build({ STT_PROVIDER: 'pocketsphinx' }, () => sphinx).speechToText).toBe(sphinx);
    const none = build({});
    expect(none.speechToText).toBeNull();
    expect(none.name).toContain('recognition: none');
    // Each part says why: a configured provider, or the offline fallback.
    expect(build({}, () => sphinx).name).toContain(
      'recognition: pocketsphinx, offline (the offline fallback: no DEEPGRAM_API_KEY or STT_URL)',
    );
    expect(build({ DEEPGRAM_API_KEY: 'dg' }).name).toContain('(DEEPGRAM_API_KEY is set)');
    expect(build({ STT_URL: 'http://localhost:8080/v1' }).name).toMatch(
      /recognition: OpenAI-compatible transcription at http:\/\/localhost:8080\/v1, model \S+ \(STT_URL is set\)/,
    );
    expect(build({ DEEPGRAM_API_KEY: 'dg', STT_PROVIDER: 'none' }, () => sphinx).speechToText).toBeNull();
    expect(build({ STT_PROVIDER: 'pocketsphinx' }, () => null).name).toContain('pocketsphinx is not installed');
  });

  it('builds the model only with LLM_URL, and ElevenLabs speech only with its key; the local voice always', () => {
    const bare = build({});
    expect(bare.languageModel).toBeNull();
    expect(bare.callSpeech.elevenlabs).toBeNull();
    expect(bare.callSpeech.local.name).toBe('espeak-ng');
    expect(bare.name).toContain('model: the sandbox dialogue engine (the offline fallback: LLM_URL is not set)');
    expect(bare.name).toContain('ElevenLabs personas with espeak-ng too (ELEVENLABS_API_KEY is not set)');
    const full = build({ LLM_URL: 'http://localhost:11434/v1', ELEVENLABS_API_KEY: 'xi' });
    expect(full.languageModel).toBeInstanceOf(OpenAiLanguageModel);
    expect(full.callSpeech.elevenlabs?.name).toBe('elevenlabs');
    expect(full.llmDeadlineMs).toBe(4000);
    expect(full.name).toContain('(LLM_URL is set)');
    expect(full.name).toContain('ElevenLabs personas with ElevenLabs (ELEVENLABS_API_KEY is set)');
  });
});

describe('providers built from the variables talk to the configured servers', () => {
  let deepgram: DeepgramFake;
  let openai: OpenAiFake;
  let eleven: ElevenLabsFake;
  beforeAll(async () => {
    [deepgram, openai, eleven] = await Promise.all([startDeepgramFake(), startOpenAiFake(), startElevenLabsFake()]);
  });
  afterAll(async () => {
    await Promise.all([deepgram.close(), openai.close(), eleven.close()]);
  });

  it('recognises, answers and speaks', async () => {
    const providers = build({
      DEEPGRAM_API_KEY: deepgram.apiKey,
      DEEPGRAM_API_BASE: deepgram.apiBase,
      LLM_URL: openai.url,
      LLM_API_KEY: openai.apiKey,
      LLM_MODEL: 'fake-model',
      ELEVENLABS_API_KEY: eleven.apiKey,
      ELEVENLABS_API_BASE: eleven.apiBase,
    });
    deepgram.transcripts.push('What are your opening hours?');
    const stream = providers.speechToText!.open({ signal: new AbortController().signal });
    for (const frame of frames(concat(tone(300), silence(100)))) stream.write(frame);
    stream.endUtterance();
    let heard = '';
    for await (const r of stream.results) {
      if (!r.final) continue;
      heard = r.text;
      break;
    }
    await stream.close();
    expect(heard).toBe('What are your opening hours?');

    openai.chatScripts.push({ events: textAnswer('From nine to five.') });
    const answer = await drain(
      providers.languageModel!.complete({
        messages: [{ role: 'user', content: heard }],
        tools: [],
        signal: new AbortController().signal,
      }),
    );
    expect(
      answer.values
        .filter((d) => d.type === 'text')
        .map((d) => (d as { text: string }).text)
        .join(''),
    ).toBe('From nine to five.');
    expect(openai.chats[0]!.body.model).toBe('fake-model');

    const speech = await drain(
      providers.callSpeech.elevenlabs!.synthesize(
        'From nine to five.',
        { provider: 'elevenlabs', voiceId: eleven.voices[0]!.voice_id },
        new AbortController().signal,
      ),
    );
    expect(speech.error).toBeNull();
    expect(concat(...speech.values).length).toBe(eleven.ulawFor('From nine to five.').length);
    await providers.close();
  });
});
