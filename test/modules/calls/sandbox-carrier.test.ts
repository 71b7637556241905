// The sandbox carrier end to end (DESIGN.md "Sandbox carrier"): with no
// Twilio, POST /api/session/call is placed by the sandbox telephony provider,
// whose signed status callbacks come back over HTTP and whose simulated caller
// connects to this server's media WebSocket over loopback and speaks the
// default script with flite (or espeak-ng) at real pace. Recognition is
// pocketsphinx when installed, else the caller's own words (marked
// `recognised: false`); the sandbox dialogue engine answers from the
// knowledge base and books through the sandbox Calendly. The call ends
// completed with its transcript, tool calls and a two-channel recording.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock, type Timer } from '../../../src/lib/clock.js';
import { newId } from '../../../src/lib/ids.js';
import { installedCallerSynthesizers } from '../../../src/providers/call-speech/offline-caller.js';
import { createPocketsphinxSpeechToText } from '../../../src/providers/speech-to-text/pocketsphinx.js';
import { DEFAULT_CALLER_SCRIPT } from '../../../src/providers/telephony/sandbox-calls.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createFundedUser } from '../../support/factories.js';
import { multipartForm } from '../../support/multipart.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';
import { callConfig } from './support.js';

/** Real time: the sandbox caller speaks at the wall clock's pace. */
class WallClock extends ManualClock {
  override now() {
    return Date.now();
  }
  override setTimeout(fn: () => void, ms: number): Timer {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  }
}

const canSpeak = installedCallerSynthesizers().length > 0;
const pocketsphinx = createPocketsphinxSpeechToText() !== null;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An app with no Twilio whose calls go through the sandbox carrier, listening on its PUBLIC_URL. */
async function sandboxCarrierApp(env: Record<string, string> = {}): Promise<TestApp> {
  const port = await freePort();
  const t = await createTestApp({
    clock: new WallClock(),
    env: { SANDBOX_CALLS: 'voice', PORT: String(port), ...env },
    config: { ...callConfig({ sandboxCalls: 'voice', recording: env.CALL_RECORDING !== '0' }), sandboxCallbackDelayMs: 50 },
  });
  // The default PUBLIC_URL (http://127.0.0.1:PORT) is where the carrier's callbacks and media stream go.
  expect(t.config.publicUrl).toBe(`http://127.0.0.1:${port}`);
  await t.app.listen({ port, host: '127.0.0.1' });
  return t;
}

let numbers = 0;
async function sandboxNumber(t: TestApp, user: TestUser): Promise<string> {
  const id = newId(Date.now());
  const phoneNumber = `+1415555${String(100 + ++numbers).padStart(4, '0')}`;
  const now = Date.now();
  await t.database.db.insertInto('phone_numbers').values({
    id, user_id: user.id, provider: 'sandbox', provider_sid: `PN${id.replace(/-/g, '')}`, phone_number: phoneNumber, name: 'Main', description: null,
    type: 'both', number_type: 'local', country: 'US', capabilities: JSON.stringify({ voice: true, sms: true, mms: false }),
    monthly_cents: 115, currency: 'usd', address_sid: null, subscription_id: null, inbound_configuration_id: null, status: 'active', created_at: now, updated_at: now,
  }).execute();
  return id;
}

/** A funded user with a number, a knowledge base with opening hours and a (sandbox) Calendly integration. */
async function clinic(t: TestApp) {
  const user = await createFundedUser(t);
  const server = await registerServer(t, user);
  const numberId = await sandboxNumber(t, user);
  const kb = (await t.app.inject({ method: 'PUT', url: '/api/knowledge-bases', headers: bearer(user.token), payload: { name: 'Clinic' } })).json();
  const form = multipartForm([{ filename: 'hours.txt', content: 'Opening hours: we are open Monday to Friday from nine to five.', contentType: 'text/plain' }]);
  expect((await t.app.inject({ method: 'POST', url: `/api/knowledge-bases/${kb.id}`, headers: { ...bearer(user.token), ...form.headers }, payload: form.payload })).statusCode).toBe(200);
  const integration = await t.app.inject({ method: 'PUT', url: '/api/integrations', headers: bearer(user.token), payload: { type: 'calendly', data: { accessToken: 'sandbox_pat_clinic_0001', eventTypeUrl: 'https://calendly.com/clinic/30min' } } });
  expect(integration.statusCode, integration.body).toBe(200);
  return { user, server, numberId, kbId: kb.id as string, integrationId: integration.json().id as string, from: `+1415555${String(100 + numbers).padStart(4, '0')}` };
}

async function placeCall(t: TestApp, c: Awaited<ReturnType<typeof clinic>>, to = '+14155550123') {
  const jwt = await signPayload(c.server, {
    agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello Grace, this is Amy from the clinic.' },
    contact: { name: 'Grace', phone: to },
    type: 'prompt',
    prompt: 'Answer questions about the clinic and book meetings.',
    knowledgeBase: { id: c.kbId },
    integrations: [c.integrationId],
    phoneNumberId: c.numberId,
  });
  const res = await t.app.inject({ method: 'POST', url: '/api/session/call', headers: bearer(c.user.token), payload: { server: c.server.name, jwt } });
  expect(res.statusCode, res.body).toBe(204);
  return res.headers['x-session-id'] as string;
}

async function ended(t: TestApp, user: TestUser, sessionId: string, timeout: number) {
  await vi.waitFor(
    async () => {
      const view = (await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })).json();
      expect(['completed', 'failed', 'no_answer', 'busy', 'canceled']).toContain(view.status);
      if (view.status === 'completed') expect(view.transcript).toBeDefined();
    },
    { timeout, interval: 250 },
  );
  return (await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })).json();
}

/** Root mean square of one channel of a 16-bit two-channel WAV. */
function channelRms(wav: Buffer, channel: 0 | 1): number {
  let sum = 0;
  let n = 0;
  for (let i = 44 + channel * 2; i + 1 < wav.length; i += 4) {
    const s = wav.readInt16LE(i);
    sum += s * s;
    n++;
  }
  return Math.sqrt(sum / Math.max(1, n));
}

type Line = { role: string; text: string; recognised?: boolean; interrupted?: boolean };

describe.skipIf(!canSpeak)('the sandbox carrier (no Twilio)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await sandboxCarrierApp();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('carries POST /api/session/call: the simulated caller talks with the agent, which answers from the knowledge base and books; the call is recorded on two channels', async () => {
    const c = await clinic(t);
    const sessionId = await placeCall(t, c);
    const view = await ended(t, c.user, sessionId, 150_000);
    expect(view).toMatchObject({ id: sessionId, direction: 'outbound', status: 'completed', from: c.from, to: '+14155550123' });
    expect(view.answeredAt).toBeDefined();

    const transcript = view.transcript as Line[];
    expect(transcript[0]).toMatchObject({ role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' });
    const callerLines = transcript.filter((l) => l.role === 'caller' && l.text.trim());
    expect(callerLines.length).toBeGreaterThanOrEqual(3);
    // pocketsphinx recognised the caller's audio (with the script as its grammar); never the caller's own words.
    if (pocketsphinx) for (const line of callerLines) expect(line.recognised, JSON.stringify(line)).not.toBe(false);
    const names = (view.toolCalls as Array<{ name: string; result: unknown }>).map((call) => call.name);
    expect(names).toEqual(expect.arrayContaining(['search_knowledge', 'check_availability', 'book_meeting']));
    const search = view.toolCalls.find((call: { name: string }) => call.name === 'search_knowledge');
    expect(JSON.stringify(search.result)).toContain('Monday to Friday');
    const booking = view.toolCalls.find((call: { name: string }) => call.name === 'book_meeting');
    expect(booking.result).toMatchObject({ booked: true });
    // The caller spoke over the agent once.
    expect(transcript.some((l) => l.role === 'agent' && l.interrupted)).toBe(true);

    // The recording: caller left, agent right, speech on both.
    expect(view.recordingUrl).toBe(`/api/calls/${sessionId}/recording`);
    const wav = await t.app.inject({ method: 'GET', url: view.recordingUrl, headers: bearer(c.user.token) });
    expect(wav.statusCode).toBe(200);
    expect(wav.rawPayload.readUInt16LE(22)).toBe(2);
    expect(wav.rawPayload.readUInt32LE(24)).toBe(8000);
    expect(wav.rawPayload.length).toBeGreaterThan(8000 * 4 * 10);
    expect(channelRms(wav.rawPayload, 0)).toBeGreaterThan(200);
    expect(channelRms(wav.rawPayload, 1)).toBeGreaterThan(200);
  }, 180_000);

  it('a number ending in 0000 rings and is not answered', async () => {
    const c = await clinic(t);
    const sessionId = await placeCall(t, c, '+14155550000');
    const view = await ended(t, c.user, sessionId, 20_000);
    expect(view).toMatchObject({ status: 'no_answer', outcome: 'no_answer' });
    expect(view.transcript ?? []).toEqual([]);
  }, 30_000);
});

describe.skipIf(!canSpeak)('the sandbox carrier without a recogniser (STT_PROVIDER=none)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await sandboxCarrierApp({ STT_PROVIDER: 'none', CALL_RECORDING: '0' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it("takes the simulated caller's own words, marked recognised: false, and keeps no recording when CALL_RECORDING=0", async () => {
    const c = await clinic(t);
    const sessionId = await placeCall(t, c);
    const view = await ended(t, c.user, sessionId, 150_000);
    expect(view).toMatchObject({ status: 'completed' });
    const callerLines = (view.transcript as Line[]).filter((l) => l.role === 'caller' && l.text.trim());
    expect(callerLines.length).toBeGreaterThanOrEqual(3);
    for (const line of callerLines) {
      expect(line.recognised).toBe(false);
      expect(DEFAULT_CALLER_SCRIPT).toContain(line.text);
    }
    expect(view.toolCalls.map((call: { name: string }) => call.name)).toEqual(expect.arrayContaining(['search_knowledge', 'check_availability', 'book_meeting']));
    expect(view.recordingUrl).toBeUndefined();
  }, 180_000);
});
