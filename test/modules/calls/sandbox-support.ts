// Helpers of the sandbox carrier's end-to-end tests (sandbox-carrier.test.ts,
// sandbox-inbound.test.ts): an app with no Twilio whose calls the sandbox
// carrier carries over loopback at the wall clock's pace, a clinic (a funded
// user with a sandbox number, a knowledge base with opening hours and a
// sandbox Calendly), a signed call, and waiting for a call's end.
import { expect, vi } from 'vitest';
import { installedCallerSynthesizers } from '../../../src/providers/call-speech/offline-caller.js';
import { createPocketsphinxSpeechToText } from '../../../src/providers/speech-to-text/pocketsphinx.js';
import type { SandboxScript } from '../../../src/providers/telephony/interface.js';
import type { Config } from '../../../src/config/types.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser } from '../../support/factories.js';
import { multipartForm } from '../../support/multipart.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { callConfig } from './support.js';
import { WallClock } from '../../support/wall-clock.js';
import { freePort } from '../../support/ports.js';
import { insertPhoneNumber } from '../../support/phone-numbers.js';

export { WallClock };

export const canSpeak = installedCallerSynthesizers().length > 0;
export const pocketsphinx = createPocketsphinxSpeechToText() !== null;

/** An app with no Twilio whose calls go through the sandbox carrier, listening on its PUBLIC_URL. */
export async function sandboxCarrierApp(
  env: Record<string, string> = {},
  config: Partial<Config> = {},
): Promise<TestApp> {
  const port = await freePort();
  const t = await createTestApp({
    clock: new WallClock(),
    env: { SANDBOX_CALLS: 'voice', PORT: String(port), ...env },
    config: {
      ...callConfig({ sandboxCalls: 'voice', recording: env.CALL_RECORDING !== '0' }),
      sandboxCallbackDelayMs: 50,
      ...config,
    },
  });
  // The default PUBLIC_URL (http://127.0.0.1:PORT) is where the carrier's callbacks and media stream go.
  expect(t.config.publicUrl).toBe(`http://127.0.0.1:${port}`);
  await t.app.listen({ port, host: '127.0.0.1' });
  return t;
}

let numbers = 0;
export async function sandboxNumber(t: TestApp, user: TestUser): Promise<string> {
  const phone = `+1415555${String(100 + ++numbers).padStart(4, '0')}`;
  return (await insertPhoneNumber(t, user.id, { provider: 'sandbox', phone })).id;
}

/** A funded user with a number, a knowledge base with opening hours and a (sandbox) Calendly integration. */
export async function clinic(t: TestApp) {
  const user = await createFundedUser(t);
  const server = await registerServer(t, user);
  const numberId = await sandboxNumber(t, user);
  const kb = (
    await t.app.inject({
      method: 'PUT',
      url: '/api/knowledge-bases',
      headers: bearer(user.token),
      payload: { name: 'Clinic' },
    })
  ).json();
  const form = multipartForm([
    {
      filename: 'hours.txt',
      content: 'Opening hours: we are open Monday to Friday from nine to five.',
      contentType: 'text/plain',
    },
  ]);
  expect(
    (
      await t.app.inject({
        method: 'POST',
        url: `/api/knowledge-bases/${kb.id}`,
        headers: { ...bearer(user.token), ...form.headers },
        payload: form.payload,
      })
    ).statusCode,
  ).toBe(200);
  const integration = await t.app.inject({
    method: 'PUT',
    url: '/api/integrations',
    headers: bearer(user.token),
    payload: {
      type: 'calendly',
      data: { accessToken: 'sandbox_pat_clinic_0001', eventTypeUrl: 'https://calendly.com/clinic/30min' },
    },
  });
  expect(integration.statusCode, integration.body).toBe(200);
  const { phone_number: from } = await t.database.db
    .selectFrom('phone_numbers')
    .select('phone_number')
    .where('id', '=', numberId)
    .executeTakeFirstOrThrow();
  return { user, server, numberId, kbId: kb.id as string, integrationId: integration.json().id as string, from };
}

export type Clinic = Awaited<ReturnType<typeof clinic>>;

/** POST /api/session/call from the clinic's number to `to`, optionally with a sandbox script, more agent fields and human agents → the session id. */
export async function placeCall(
  t: TestApp,
  c: Clinic,
  to = '+14155550123',
  options: {
    script?: SandboxScript;
    agent?: Record<string, unknown>;
    humanAgents?: Array<{ name: string; phone: string }>;
  } = {},
) {
  const jwt = await signPayload(c.server, {
    agent: {
      name: 'Amy',
      personaId: 'local-amy',
      firstMessage: 'Hello Grace, this is Amy from the clinic.',
      ...options.agent,
    },
    contact: { name: 'Grace', phone: to },
    type: 'prompt',
    prompt: 'Answer questions about the clinic and book meetings.',
    knowledgeBase: { id: c.kbId },
    integrations: [c.integrationId],
    phoneNumberId: c.numberId,
    ...(options.humanAgents ? { humanAgents: options.humanAgents } : {}),
  });
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/session/call',
    headers: bearer(c.user.token),
    payload: { server: c.server.name, jwt, ...(options.script ? { script: options.script } : {}) },
  });
  expect(res.statusCode, res.body).toBe(204);
  return res.headers['x-session-id'] as string;
}

export async function ended(t: TestApp, user: TestUser, sessionId: string, timeout: number) {
  await vi.waitFor(
    async () => {
      const view = (
        await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
      ).json();
      expect(['completed', 'failed', 'no_answer', 'busy', 'canceled']).toContain(view.status);
      if (view.status === 'completed') expect(view.transcript).toBeDefined();
    },
    { timeout, interval: 250 },
  );
  return (await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })).json();
}

export type Line = { role: string; text: string; recognised?: boolean; interrupted?: boolean };

/** Root mean square of one channel of a 16-bit two-channel WAV. */
export function channelRms(wav: Buffer, channel: 0 | 1): number {
  let sum = 0;
  let n = 0;
  for (let i = 44 + channel * 2; i + 1 < wav.length; i += 4) {
    const s = wav.readInt16LE(i);
    sum += s * s;
    n++;
  }
  return Math.sqrt(sum / Math.max(1, n));
}

/** The call's recording: a two-channel 8 kHz WAV of more than 10 s, with speech on both channels (the caller left, the agent right). */
export async function expectTwoVoiceRecording(
  t: TestApp,
  user: TestUser,
  sessionId: string,
  recordingUrl: string | undefined,
): Promise<void> {
  expect(recordingUrl).toBe(`/api/calls/${sessionId}/recording`);
  const wav = await t.app.inject({ method: 'GET', url: recordingUrl!, headers: bearer(user.token) });
  expect(wav.statusCode).toBe(200);
  expect(wav.rawPayload.readUInt16LE(22)).toBe(2);
  expect(wav.rawPayload.readUInt32LE(24)).toBe(8000);
  expect(wav.rawPayload.length).toBeGreaterThan(8000 * 4 * 10);
  expect(channelRms(wav.rawPayload, 0)).toBeGreaterThan(200);
  expect(channelRms(wav.rawPayload, 1)).toBeGreaterThan(200);
}
