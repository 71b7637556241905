// The SDK's call-session helpers against a listening server: signCallRequest
// (plain and nested in a JWE), CallsApi.start, a replay refused; and
// sdk/examples/sandbox-call.ts, run as a newcomer would, prints the call's
// progress to completed.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WorkspaceApiError, WorkspaceClient, signCallRequest } from '../../sdk/src/index.js';
import { callConfig } from '../modules/calls/support.js';
import { runNpx } from './support.js';
import { type TelephonyTestApp, createTelephonyApp } from '../modules/telephony/helpers.js';
import { createFundedUser, createVerifiedUser } from '../support/factories.js';
import { canSpeak, channelRms, sandboxCarrierApp } from '../modules/calls/sandbox-support.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let t: TelephonyTestApp;
beforeAll(async () => {
  t = await createTelephonyApp({ config: callConfig() }, { realBilling: true });
});
afterAll(() => t.close());

/** The session's call_status statuses, read through the SDK's event stream, up to completed. */
async function statusesToCompleted(client: WorkspaceClient, sessionId: string): Promise<string[]> {
  const events = client.events.subscribe('call_status', { filter: { session_id: sessionId }, lastEventId: '0' });
  const seen: string[] = [];
  for await (const e of events) {
    seen.push(e.data.status);
    if (e.data.status === 'completed') break;
  }
  events.close();
  return seen;
}

describe('SDK call sessions', () => {
  it('signs a call request, plain and nested, starts it and follows it to completed; a replay is invalid_token', async () => {
    // Calls cost money: $5 of prepaid credit (sandbox checkout).
    const user = await createFundedUser(t);
    const client = new WorkspaceClient({ baseUrl: t.publicUrl, token: user.token });
    const offers = (await (
      await client.http.send(`${t.publicUrl}/api/phone-numbers/search/sandbox?country=US&type=local`)
    ).json()) as Array<{ capabilities: { voice: boolean }; addressRequirements: string; price: { jwt: string } }>;
    const offer = offers.find((o) => o.capabilities.voice && o.addressRequirements === 'none')!;
    const put = () =>
      client.http.send(`${t.publicUrl}/api/phone-numbers`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jwt: offer.price.jwt }),
      });
    // The top-up's checkout kept the card on file, so the number is bought at once.
    expect((await put()).status).toBe(200);

    const server = await client.servers.register({ name: 'sdk-calls', mode: 'generate' });
    const payload = {
      agent: { name: 'Amy' },
      contact: { name: 'Grace', phone: '+14155550123' },
      type: 'prompt' as const,
      prompt: 'Confirm the appointment.',
    };
    for (const serviceKey of [undefined, await client.servers.current()]) {
      const jwt = await signCallRequest(server.privateKey!, payload, serviceKey);
      expect(jwt.split('.')).toHaveLength(serviceKey ? 5 : 3);
      const { sessionId } = await client.calls.start({ server: server.name, jwt });
      expect(await statusesToCompleted(client, sessionId)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);
      // The call page: its record's transcript once it is written; the list has it first.
      await vi.waitFor(async () => expect((await client.calls.get(sessionId)).transcript?.length).toBeGreaterThan(0), {
        timeout: 10_000,
        interval: 50,
      });
      const call = await client.calls.get(sessionId);
      expect(call).toMatchObject({ id: sessionId, direction: 'outbound', status: 'completed', to: '+14155550123' });
      expect(call.transcript![0]).toMatchObject({ role: 'agent' });
      expect((await client.calls.list({ limit: 1 })).calls[0]!.id).toBe(sessionId);
      const missing = await client.calls.recording(sessionId).catch((e: unknown) => e);
      expect(missing).toMatchObject({ status: 404 });
      const replay = await client.calls.start({ server: server.name, jwt }).catch((e: unknown) => e);
      expect(replay).toBeInstanceOf(WorkspaceApiError);
      expect(replay).toMatchObject({ status: 400, code: 'invalid_token' });
    }
  }, 30_000);

  it('runs a temporary test call: types, code by SMS, start with the code, progress to completed', async () => {
    const user = await createVerifiedUser(t);
    const client = new WorkspaceClient({ baseUrl: t.publicUrl, token: user.token });
    const { types } = await client.calls.temporaryTypes();
    const phone = '+14155550177';
    const { key } = await client.calls.requestTemporary(
      { phone, type: types[0]!.id },
      { idempotencyKey: `sdk-temp-${user.id}` },
    );
    const sms = (await (
      await client.http.send(`${t.publicUrl}/api/sandbox/outbox?to=${encodeURIComponent(phone)}&limit=1`)
    ).json()) as Array<{ data: { code: string } }>;
    const wrong = await client.calls
      .startTemporary({ key, code: '000000' === sms[0]!.data.code ? '111111' : '000000', email: 'grace@example.com' })
      .catch((e: unknown) => e);
    expect(wrong).toMatchObject({ status: 400, code: 'invalid_code' });
    const { sessionId } = await client.calls.startTemporary({
      key,
      code: sms[0]!.data.code,
      email: 'grace@example.com',
    });
    expect(await statusesToCompleted(client, sessionId)).toEqual(['queued', 'ringing', 'in_progress', 'completed']);
  }, 30_000);

  it('sdk/examples/sandbox-call.ts prints the progress of a sandbox call to completed', async () => {
    const { code, stdout, stderr } = await runNpx(
      ['tsx', 'sdk/examples/sandbox-call.ts'],
      { BASE_URL: t.publicUrl },
      80_000,
    );
    expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => l.trim());
    expect(lines[0]).toMatch(/^1\. signed up and verified \+1555\d{7}$/);
    expect(lines).toContain('queued');
    expect(lines).toContain('in_progress');
    expect(lines.some((l) => /^completed after \d+ s$/.test(l))).toBe(true);
    expect(lines).toContain('agent: Hello Grace, this is Amy from the clinic.');
    // This server's calls are timers (SANDBOX_CALLS=timer): no audio, so no recording; the sandbox carrier's is saved (the test below).
    expect(lines.at(-3)).toMatch(/^6\. no recording/);
    // Where the console shows the call, and the account to sign in with.
    expect(lines.at(-2)).toMatch(
      new RegExp(
        `^7\\. open ${t.publicUrl}/console/calls/[0-9a-f-]{36} and sign in as call\\.\\d+\\.\\d{7}@example\\.com, password "correct horse battery staple"$`,
      ),
    );
    expect(lines.at(-1)).toBe('done');
  }, 90_000);
});

describe('sdk/examples/sandbox-call.ts against the sandbox carrier (SANDBOX_CALLS=voice, as `npm start`)', () => {
  it.skipIf(!canSpeak)(
    "saves the call's recording: a WAV holding the agent and the simulated caller",
    async () => {
      const voice = await sandboxCarrierApp();
      const dir = mkdtempSync(join(tmpdir(), 'sdk-recording-'));
      try {
        const file = join(dir, 'call.wav');
        const { code, stdout, stderr } = await runNpx(
          ['tsx', 'sdk/examples/sandbox-call.ts'],
          { BASE_URL: voice.config.publicUrl, RECORDING_FILE: file },
          170_000,
        );
        expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
        expect(stdout).toContain(`6. recording saved to ${file} (the caller left, the agent right)`);
        // The agent answered from the knowledge base and booked through the sandbox Calendly.
        expect(stdout).toMatch(/tool search_knowledge .*Monday to Friday/);
        expect(stdout).toMatch(/tool book_meeting /);
        const wav = readFileSync(file);
        expect(wav.toString('latin1', 0, 4)).toBe('RIFF');
        expect(wav.readUInt16LE(22)).toBe(2);
        expect(channelRms(wav, 0)).toBeGreaterThan(100); // the caller
        expect(channelRms(wav, 1)).toBeGreaterThan(100); // the agent
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await voice.close();
      }
    },
    180_000,
  );
});
