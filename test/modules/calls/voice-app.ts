// The app of the built-in voice agent's end-to-end tests that play Twilio:
// listening on its PUBLIC_URL at the wall clock's pace, placing calls through
// the Twilio fake, the model being the OpenAI-compatible fake, recognition
// the Deepgram fake (streaming) or the OpenAI fake's transcriptions (one
// request per utterance).
import type { TestApp } from '../../support/app.js';
import { createTestApp } from '../../support/app.js';
import type { DeepgramFake } from '../../support/deepgram-fake.js';
import type { OpenAiFake } from '../../support/openai-fake.js';
import { freePort } from '../../support/ports.js';
import type { TwilioFake } from '../../support/twilio-fake.js';
import { WallClock } from '../../support/wall-clock.js';
import { callConfig } from './support.js';

export async function twilioVoiceApp(fakes: {
  twilio: TwilioFake;
  openai: OpenAiFake;
  deepgram?: DeepgramFake;
}): Promise<{ t: TestApp; publicUrl: string }> {
  const { twilio, openai, deepgram } = fakes;
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const t = await createTestApp({
    clock: new WallClock(),
    config: {
      ...callConfig(),
      publicUrl,
      twilio: {
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: twilio.from,
        apiBase: twilio.apiBase,
      },
      voiceAgent: {
        sttProvider: deepgram ? 'deepgram' : 'openai',
        deepgram: deepgram ? { apiKey: deepgram.apiKey, apiBase: deepgram.apiBase } : null,
        openaiStt: deepgram ? null : { url: openai.url, apiKey: openai.apiKey, model: 'whisper-1' },
        llm: { url: openai.url, apiKey: openai.apiKey, model: 'fake-model' },
        llmDeadlineMs: 4000,
      },
    },
  });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, publicUrl };
}
