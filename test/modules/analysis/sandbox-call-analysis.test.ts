// The sandbox analyser on real sandbox calls (issue 40 "Done when"): calls
// placed with POST /api/session/call, carried by the sandbox carrier over
// loopback at real pace and answered by the sandbox dialogue engine, then
// analysed by the job the calls service queues when each ends. The default
// script (opening hours, a meeting next Tuesday, goodbye) with criteria and a
// date field; a pathway call whose extracted variable fills the field of the
// same name. Runs on SQLite, and on PostgreSQL with DATABASE_URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxScript } from '../../../src/providers/telephony/interface.js';
import type { TestApp } from '../../support/app.js';
import { bearer } from '../../support/factories.js';
import { signPayload } from '../../support/signed-payloads.js';
import { type Clinic, canSpeak, clinic, ended, sandboxCarrierApp } from '../calls/sandbox-support.js';
import { analysedCall, storeRecords } from './support.js';

describe.skipIf(!canSpeak)('the sandbox analyser on sandbox calls', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await sandboxCarrierApp({ STT_PROVIDER: 'none', CALL_RECORDING: '0' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  }, 60_000);

  async function place(c: Clinic, claims: Record<string, unknown>, script?: SandboxScript) {
    const jwt = await signPayload(c.server, {
      contact: { name: 'Grace', phone: '+14155550123' },
      phoneNumberId: c.numberId,
      knowledgeBase: { id: c.kbId },
      integrations: [c.integrationId],
      ...claims,
    });
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/session/call',
      headers: bearer(c.user.token),
      payload: { server: c.server.name, jwt, ...(script ? { script } : {}) },
    });
    expect(res.statusCode, res.body).toBe(204);
    return res.headers['x-session-id'] as string;
  }

  it('analyses the default script and a pathway call', async () => {
    const [a, b] = [await clinic(t), await clinic(t)];
    const analysis = {
      successCriteria: 'The caller booked a meeting',
      schema: {
        type: 'object',
        properties: {
          preferred_day: { type: 'string', format: 'date' },
          order_number: { type: 'number' },
        },
      },
    };
    const [scripted, walked] = await Promise.all([
      place(a, {
        agent: {
          name: 'Amy',
          personaId: 'local-amy',
          firstMessage: 'Hello Grace, this is Amy from the clinic.',
          analysis,
        },
        type: 'prompt',
        prompt: 'Answer questions about the clinic and book meetings.',
      }),
      place(
        b,
        {
          agent: { name: 'Amy', personaId: 'local-amy', firstMessage: 'Hello, this is Amy.', analysis },
          type: 'pathway',
          pathway: {
            name: 'Order',
            start: 'ask',
            variables: { order_number: { type: 'number' } },
            nodes: [
              { id: 'ask', type: 'conversation', say: 'What is your order number?', extract: ['order_number'] },
              { id: 'bye', type: 'end', say: 'Thank you, order {{order_number}} is noted. Goodbye!' },
            ],
            edges: [{ from: 'ask', to: 'bye', if: { var: 'order_number', op: 'exists' } }],
          },
        },
        ['It is order 42'],
      ),
    ]);
    for (const [c, id] of [
      [a, scripted],
      [b, walked],
    ] as const)
      expect(await ended(t, c.user, id, 150_000)).toMatchObject({ status: 'completed' });

    const first = (await analysedCall(t, a.user, scripted)).analysis;
    expect(first).toMatchObject({ status: 'completed', by: 'sandbox', success: true, tasks: [] });
    expect(first.successReason).toBe('a meeting was booked');
    expect(first.summary).toContain('(answered)');
    expect(first.summary).toMatch(/booked a meeting for \d{4}-\d{2}-\d{2}T/);
    expect(new Date(`${first.data.preferred_day}T00:00:00Z`).getUTCDay()).toBe(2); // "next Tuesday"
    const [metrics] = await storeRecords(t, a.user, 'performance-metrics');
    expect(metrics).toMatchObject({ sessionId: scripted, direction: 'outbound', outcome: 'completed', turns: 4 });
    expect((metrics!.latency as { p50Ms: number }).p50Ms).toBeGreaterThan(0);
    expect(metrics!.costUsd).toBeGreaterThan(0);

    const view = await analysedCall(t, b.user, walked);
    expect(view.pathway.variables).toMatchObject({ order_number: 42 });
    expect(view.analysis).toMatchObject({ status: 'completed', by: 'sandbox' });
    expect(view.analysis.data).toEqual({ order_number: 42 });
    // Criteria about a meeting, and none was booked: not a success, and the caller asked for none (no task).
    expect(view.analysis).toMatchObject({ success: false, successReason: 'no meeting was booked', tasks: [] });
  }, 240_000);
});
