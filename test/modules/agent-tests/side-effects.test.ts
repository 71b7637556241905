// Side effects of agent tests against a local server: with the default
// `sideEffects: "sandbox"` a custom HTTP tool is never sent (the server hears
// nothing, the tool answers "not sent"), with "live" it is sent as on a call,
// signed with the account's webhook secret, and its answer is used.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { bearer, createVerifiedUser, type TestUser } from '../../support/factories.js';
import { type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';

let t: TestApp;
let user: TestUser;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver(() => ({
    status: 200,
    json: { message: 'Your refund of order 77 is on its way.' },
  }));
  t = await createTestApp();
  user = await createVerifiedUser(t);
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

async function runTest(sideEffects: 'sandbox' | 'live') {
  const created = await t.app.inject({
    method: 'POST',
    url: '/api/agent-tests',
    headers: bearer(user.token),
    payload: {
      name: `refund, ${sideEffects}`,
      sideEffects,
      agent: {
        name: 'Amy',
        prompt: 'Help with refunds.',
        tools: [
          {
            type: 'http',
            name: 'request_refund',
            description: 'Asks for a refund of an order',
            parameters: { type: 'object', properties: { order: { type: 'integer' } }, required: ['order'] },
            url: `${receiver.url}/refund`,
            keywords: ['refund'],
          },
        ],
      },
      caller: { lines: ['I want a refund for order 77'] },
      expect: { toolCalls: [{ name: 'request_refund', arguments: { order: 77 } }], says: ['on its way'] },
    },
  });
  expect(created.statusCode, created.body).toBe(201);
  const { runId } = (
    await t.app.inject({
      method: 'POST',
      url: `/api/agent-tests/${created.json().id}/runs`,
      headers: bearer(user.token),
    })
  ).json();
  for (let i = 0; i < 500; i++) {
    const run = (await t.app.inject({ url: `/api/agent-tests/runs/${runId}`, headers: bearer(user.token) })).json();
    if (!['queued', 'running'].includes(run.status)) return run.results[0];
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the run did not end');
}

describe('agent tests and side effects', () => {
  it('never sends a custom tool in sandbox mode: the server hears nothing and the tool answers that it was not sent', async () => {
    const result = await runTest('sandbox');
    expect(receiver.received).toHaveLength(0);
    expect(result.toolCalls).toEqual([
      expect.objectContaining({
        name: 'request_refund',
        arguments: { order: 77 },
        result: { error: expect.stringMatching(/^not sent: /) },
      }),
    ]);
    expect(result.status).toBe('failed');
    expect(result.checks.map((c: { name: string; passed: boolean }) => [c.name, c.passed])).toEqual([
      ['toolCalls[0]', true],
      ['says[0]', false],
    ]);
  });

  it('sends it with sideEffects "live", signed as on a call, and uses its answer', async () => {
    const result = await runTest('live');
    expect(result.status, JSON.stringify(result.checks)).toBe('passed');
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    const secret = (await t.app.inject({ url: '/api/webhooks/secret', headers: bearer(user.token) })).json().secret;
    const verified = new Webhook(secret).verify(request!.body, request!.headers as Record<string, string>);
    expect(verified).toMatchObject({ order: 77, _call: { call: { session_id: 'agent-test', direction: 'web' } } });
  });
});
