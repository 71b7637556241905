// A whole campaign offline through the sandbox carrier (real time: the
// simulated callees speak at real pace over the media stream): each of
// DESIGN.md's sandbox callees ends in its own status. 0002 is busy, 0003 an
// answering machine (the agent leaves its voicemail message), 0004 asks not
// to be called again (the sandbox engine calls opt_out: the number is listed,
// the contact opted_out), a contact's own fields.sandboxScript is what it
// says, 0000 rings out.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TestApp } from '../../support/app.js';
import { bearer, createFundedUser } from '../../support/factories.js';
import { canSpeak, ended, sandboxCarrierApp, sandboxNumber } from '../calls/sandbox-support.js';
import { registerServer, signPayload } from '../../support/signed-payloads.js';

describe.skipIf(!canSpeak)('a campaign through the sandbox carrier', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await sandboxCarrierApp();
    t.services.campaigns.dialer.start();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  it('ends each sandbox callee in its own status', async () => {
    const user = await createFundedUser(t, 20);
    const numberId = await sandboxNumber(t, user);
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/campaigns',
      headers: bearer(user.token),
      payload: {
        name: 'Callees',
        agent: {
          name: 'Amy',
          firstMessage: 'Hello, this is Amy from the clinic.',
          voicemailMessage: 'This is Amy from the clinic, please call us back.',
        },
        fromNumberIds: [numberId],
        contacts: [
          { name: 'Busy', phone: '+14155550002' },
          { name: 'Machine', phone: '+14155550003' },
          { name: 'Opt out', phone: '+14155550004' },
          { name: 'Own', phone: '+14155550123', fields: { sandboxScript: ['Hello?', 'No thank you, goodbye.'] } },
          { name: 'Nobody', phone: '+14155550000' },
        ],
        pacing: { callsPerMinute: 600, maxConcurrent: 2 },
        retry: { maxAttempts: 1 },
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    expect(
      (await t.app.inject({ method: 'POST', url: `/api/campaigns/${id}/start`, headers: bearer(user.token) }))
        .statusCode,
    ).toBe(200);
    await vi.waitFor(
      async () => {
        const view = (
          await t.app.inject({ method: 'GET', url: `/api/campaigns/${id}`, headers: bearer(user.token) })
        ).json();
        expect(view.status).toBe('completed');
      },
      { timeout: 240_000, interval: 1000 },
    );
    const items = (
      await t.app.inject({ method: 'GET', url: `/api/campaigns/${id}/contacts`, headers: bearer(user.token) })
    ).json().items as Array<{ status: string; attempts: Array<{ sessionId: string }> }>;
    expect(items.map((c) => c.status)).toEqual(['busy', 'voicemail', 'opted_out', 'completed', 'no_answer']);
    const call = async (i: number) =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/calls/${items[i]!.attempts[0]!.sessionId}`,
          headers: bearer(user.token),
        })
      ).json();
    const machine = await call(1);
    expect(machine.outcome).toBe('voicemail');
    expect(machine.transcript.map((l: { text: string }) => l.text).join(' ')).toContain('please call us back');
    const optOut = await call(2);
    expect(optOut.toolCalls.map((c: { name: string }) => c.name)).toContain('opt_out');
    const own = await call(3);
    expect(
      own.transcript
        .filter((l: { role: string }) => l.role === 'caller')
        .map((l: { text: string }) => l.text.toLowerCase())
        .join(' '),
    ).toContain('goodbye');
    const listed = (await t.app.inject({ method: 'GET', url: '/api/do-not-call', headers: bearer(user.token) })).json()
      .items;
    expect(listed).toEqual([
      expect.objectContaining({
        phone: '+14155550004',
        source: 'opt_out',
        sessionId: items[2]!.attempts[0]!.sessionId,
      }),
    ]);
  }, 300_000);

  it('plays the same callees on single calls: the opt-out callee is listed, a contact speaks its own fields.sandboxScript', async () => {
    const user = await createFundedUser(t, 20);
    const numberId = await sandboxNumber(t, user);
    const server = await registerServer(t, user);
    const call = async (phone: string, fields?: Record<string, string>) => {
      const jwt = await signPayload(server, {
        agent: { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic.' },
        contact: { name: 'Grace', phone, ...(fields ? { fields } : {}) },
        type: 'prompt',
        prompt: 'Remind the contact of the appointment.',
        phoneNumberId: numberId,
      });
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/session/call',
        headers: bearer(user.token),
        payload: { server: server.name, jwt },
      });
      expect(res.statusCode, res.body).toBe(204);
      return res.headers['x-session-id'] as string;
    };
    const [optOut, own] = await Promise.all([
      call('+14155550004'),
      call('+14155550124', { sandboxScript: 'Hello?\nNo thank you, goodbye.' }),
    ]);
    const [optOutView, ownView] = await Promise.all([ended(t, user, optOut, 120_000), ended(t, user, own, 120_000)]);
    expect(optOutView.toolCalls.map((c: { name: string }) => c.name)).toContain('opt_out');
    const listed = (await t.app.inject({ method: 'GET', url: '/api/do-not-call', headers: bearer(user.token) })).json()
      .items;
    expect(listed).toEqual([expect.objectContaining({ phone: '+14155550004', source: 'opt_out', sessionId: optOut })]);
    const callerLines = ownView.transcript
      .filter((l: { role: string }) => l.role === 'caller')
      .map((l: { text: string }) => l.text.toLowerCase());
    expect(callerLines.length).toBe(2);
    expect(callerLines.join(' ')).toContain('goodbye');
    // Listed now: a second call to the opt-out callee is refused.
    const jwt = await signPayload(server, {
      agent: { name: 'Amy' },
      contact: { name: 'Grace', phone: '+14155550004' },
      type: 'prompt',
      prompt: 'Hi',
      phoneNumberId: numberId,
    });
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(user.token),
      payload: { server: server.name, jwt },
    });
    expect(again.statusCode).toBe(409);
  }, 300_000);
});
