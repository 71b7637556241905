// Using custom HTTP tools against a local server on 127.0.0.1, on a real
// database (the account's webhook secret): arguments checked before any
// request, Standard Webhooks signatures checked with the official library,
// timeouts, the one retry, the size cap, sealed headers sent in clear, assign,
// and the address filter of production mode (no traffic leaves loopback).
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomToolServices } from '../../../src/modules/custom-tools/create-services.js';
import type { CustomToolService, HttpTool } from '../../../src/modules/custom-tools/service.js';
import { createToolSender } from '../../../src/modules/custom-tools/send.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type ReceivedWebhook, type WebhookReceiver, startWebhookReceiver } from '../../support/webhook-receiver.js';

let t: TestApp;
let receiver: WebhookReceiver;
let tools: ReturnType<typeof createCustomToolServices>;
let userId: string;
let secret: string;

beforeAll(async () => {
  // Outside production private targets are allowed (the webhook policy), so the receiver on 127.0.0.1 is reachable.
  t = await createTestApp();
  receiver = await startWebhookReceiver();
  tools = createCustomToolServices({
    webhooks: t.services.webhooks.webhooks,
    secretBox: t.services.platform.secretBox,
    clock: t.clock,
    config: t.config,
  });
  userId = (await createVerifiedUser(t)).id;
  secret = (await t.services.webhooks.webhooks.getSecret(userId)).secret;
});
afterAll(async () => {
  await tools?.stop();
  await receiver?.close();
  await t?.close();
});

const call = { session_id: 'sess_1', direction: 'inbound' as const, from: '+15550001111', to: '+15550002222' };
const variables = { customer: 'Ada', plan: 'gold' };

function declare(service: CustomToolService, overrides: Record<string, unknown> = {}): HttpTool {
  const [tool] = service.declare(
    [
      {
        type: 'http',
        name: 'check_order',
        description: 'Looks an order up',
        parameters: {
          type: 'object',
          properties: { order: { type: 'string', pattern: '^[0-9]{4}$' } },
          required: ['order'],
          additionalProperties: false,
        },
        url: `${receiver.url}/orders`,
        ...overrides,
      },
    ],
    'tools',
  );
  return tool;
}

/** Requests the receiver got since `from`. */
const since = (from: number): ReceivedWebhook[] => receiver.received.slice(from);

describe('invoke', () => {
  it('POSTs the arguments with _call beside them, signed with the account webhook secret (checked with standardwebhooks)', async () => {
    receiver.setResponder(() => ({ status: 200, json: { status: 'shipped' } }));
    const from = receiver.received.length;
    const outcome = await tools.customTools.invoke(
      userId,
      declare(tools.customTools),
      { order: '1234' },
      call,
      variables,
    );
    expect(outcome).toMatchObject({ ok: true, result: { status: 'shipped' }, assigned: {} });
    const [request] = since(from);
    expect(request.path).toBe('/orders');
    expect(request.headers['content-type']).toBe('application/json');
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toEqual({
      order: '1234',
      _call: { call, variables },
    });
    expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it('GETs with the arguments in the query and _call one signed JSON parameter', async () => {
    receiver.setResponder(() => ({ status: 200, json: { ok: 1 } }));
    const from = receiver.received.length;
    const outcome = await tools.customTools.invoke(
      userId,
      declare(tools.customTools, { method: 'GET', url: `${receiver.url}/orders?v=2` }),
      { order: '1234' },
      call,
      variables,
    );
    expect(outcome).toMatchObject({ ok: true, result: { ok: 1 } });
    const [request] = since(from);
    const query = new URL(request.path, receiver.url).searchParams;
    expect(query.get('v')).toBe('2');
    expect(query.get('order')).toBe('1234');
    expect(request.body).toBe('');
    expect(new Webhook(secret).verify(query.get('_call')!, request.headers as Record<string, string>)).toEqual({
      call,
      variables,
      arguments: { order: '1234' },
    });
  });

  it('checks the arguments against the parameters first: invalid ones are a tool error and make no request', async () => {
    const from = receiver.received.length;
    const outcome = await tools.customTools.invoke(
      userId,
      declare(tools.customTools),
      { order: 'abc' },
      call,
      variables,
    );
    expect(outcome).toMatchObject({ ok: false, error: 'invalid arguments: /order must match pattern "^[0-9]{4}$"' });
    expect(
      await tools.customTools.invoke(
        userId,
        declare(tools.customTools),
        { order: '1234', extra: true },
        call,
        variables,
      ),
    ).toMatchObject({ ok: false, error: expect.stringContaining('invalid arguments') });
    expect(since(from)).toHaveLength(0);
  });

  it('sends the sealed headers in clear, and shows them only as ****', async () => {
    receiver.setResponder(() => ({ status: 200, json: {} }));
    const tool = declare(tools.customTools, { headers: { Authorization: 'Bearer sk_test_secret', 'X-Team': 'blue' } });
    expect(JSON.stringify(tool)).not.toContain('sk_test_secret');
    expect(tools.customTools.view(tool).headers).toEqual({ Authorization: '****', 'X-Team': '****' });
    const from = receiver.received.length;
    expect(await tools.customTools.invoke(userId, tool, { order: '1234' }, call, variables)).toMatchObject({
      ok: true,
    });
    const [request] = since(from);
    expect(request.headers.authorization).toBe('Bearer sk_test_secret');
    expect(request.headers['x-team']).toBe('blue');
  });

  it('assigns variables from a nested answer; a path that finds nothing assigns nothing', async () => {
    receiver.setResponder(() => ({
      status: 200,
      json: { order: { status: 'shipped', items: [{ sku: 'A-1', qty: 2 }] } },
    }));
    const tool = declare(tools.customTools, {
      assign: { order_status: '$.order.status', first_sku: '$.order.items[0].sku', missing: '$.order.items[3].sku' },
    });
    const outcome = await tools.customTools.invoke(userId, tool, { order: '1234' }, call, variables);
    expect(outcome).toMatchObject({ ok: true, assigned: { order_status: 'shipped', first_sku: 'A-1' } });
    expect(outcome.ok && Object.keys(outcome.assigned)).toEqual(['order_status', 'first_sku']);
  });

  it('a late answer is a timeout: a tool error within the tool timeout, not the answer', async () => {
    receiver.setResponder(() => ({ status: 200, json: { late: true }, delayMs: 3000 }));
    const outcome = await tools.customTools.invoke(
      userId,
      declare(tools.customTools, { timeoutMs: 300 }),
      { order: '1234' },
      call,
      variables,
    );
    expect(outcome).toMatchObject({ ok: false, error: 'timed out after 300 ms' });
    expect(outcome.ms).toBeLessThan(3000);
  });

  it('retries a 500 once (the same webhook-id), then reports it', async () => {
    receiver.setResponder(() => 500);
    const from = receiver.received.length;
    const outcome = await tools.customTools.invoke(
      userId,
      declare(tools.customTools),
      { order: '1234' },
      call,
      variables,
    );
    expect(outcome).toMatchObject({ ok: false, error: 'HTTP 500 (after a retry)' });
    const attempts = since(from);
    expect(attempts).toHaveLength(2);
    expect(attempts[1].headers['webhook-id']).toBe(attempts[0].headers['webhook-id']);
    for (const attempt of attempts) new Webhook(secret).verify(attempt.body, attempt.headers as Record<string, string>);
  });

  it('a 500 then a good answer is a result', async () => {
    let answered = 0;
    receiver.setResponder(() => (answered++ === 0 ? 503 : { status: 200, json: { second: true } }));
    expect(
      await tools.customTools.invoke(userId, declare(tools.customTools), { order: '1234' }, call, variables),
    ).toMatchObject({ ok: true, result: { second: true } });
  });

  it('does not retry a 4xx, and a 200 that is not JSON is a tool error', async () => {
    receiver.setResponder(() => 404);
    const from = receiver.received.length;
    expect(
      await tools.customTools.invoke(userId, declare(tools.customTools), { order: '1234' }, call, variables),
    ).toMatchObject({ ok: false, error: 'HTTP 404' });
    expect(since(from)).toHaveLength(1);
    receiver.setResponder(() => ({ status: 200, body: '<html>hello</html>' }));
    expect(
      await tools.customTools.invoke(userId, declare(tools.customTools), { order: '1234' }, call, variables),
    ).toMatchObject({ ok: false, error: 'the answer is not JSON' });
  });

  it('retries a refused connection once, then reports it', async () => {
    const closed = await startWebhookReceiver();
    await closed.close();
    const outcome = await tools.customTools.invoke(
      userId,
      declare(tools.customTools, { url: `${closed.url}/orders` }),
      { order: '1234' },
      call,
      variables,
    );
    expect(outcome).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^the request failed \(.*ECONNREFUSED.*\) \(after a retry\)$/),
    });
  });

  it('refuses an answer over 64 KB', async () => {
    receiver.setResponder(() => ({ status: 200, json: { blob: 'x'.repeat(70 * 1024) } }));
    expect(
      await tools.customTools.invoke(userId, declare(tools.customTools), { order: '1234' }, call, variables),
    ).toMatchObject({ ok: false, error: 'the answer is larger than 64 KB' });
  });

  it('throws when the caller aborts (barge-in, hang-up): not a tool error', async () => {
    receiver.setResponder(() => ({ status: 200, json: {}, delayMs: 2000 }));
    const controller = new AbortController();
    const running = tools.customTools.invoke(userId, declare(tools.customTools), { order: '1234' }, call, variables, {
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('caller hung up')), 50);
    await expect(running).rejects.toThrow('caller hung up');
  });
});

describe('production mode: the webhook address filter', () => {
  let prod: TestApp;
  let prodTools: ReturnType<typeof createCustomToolServices>;
  beforeAll(async () => {
    prod = await createTestApp({
      config: { webhooks: { allowPrivate: false, timeoutMs: 2000, pollIntervalMs: 1000 } },
    });
    prodTools = createCustomToolServices({
      webhooks: prod.services.webhooks.webhooks,
      secretBox: prod.services.platform.secretBox,
      clock: prod.clock,
      config: prod.config,
    });
  });
  afterAll(async () => {
    await prodTools?.stop();
    await prod?.close();
  });

  it('refuses a private or loopback address when the tool is declared (400 naming the path)', () => {
    for (const url of ['http://10.0.0.5/hook', 'http://[::1]/hook', 'http://localhost:8080/hook']) {
      expect(() => declare(prodTools.customTools, { url })).toThrow(
        /^tools\[0\]\.url: webhook must point at a public address$/,
      );
    }
    expect(declare(prodTools.customTools, { url: 'https://api.example.com/hook' }).url).toBe(
      'https://api.example.com/hook',
    );
  });

  it('a tool that names a loopback address (declared elsewhere) is a tool error and sends nothing', async () => {
    const tool = { ...declare(tools.customTools), url: `${receiver.url}/orders` };
    const from = receiver.received.length;
    const owner = (await createVerifiedUser(prod)).id;
    expect(await prodTools.customTools.invoke(owner, tool, { order: '1234' }, call, variables)).toMatchObject({
      ok: false,
      error: "the tool's address was refused: webhook must point at a public address",
    });
    expect(since(from)).toHaveLength(0);
  });

  it('a name that resolves to a private address is refused when connecting (after DNS)', async () => {
    // The resolver says the public-looking name is 127.0.0.1: the socket is never opened.
    const sender = createToolSender({
      allowPrivate: false,
      lookup: ((_host: string, _opts: unknown, cb: (e: null, a: Array<{ address: string; family: number }>) => void) =>
        cb(null, [{ address: '127.0.0.1', family: 4 }])) as never,
    });
    const port = new URL(receiver.url).port;
    const owner = (await createVerifiedUser(prod)).id;
    const service = createCustomToolServices({
      webhooks: prod.services.webhooks.webhooks,
      secretBox: prod.services.platform.secretBox,
      clock: prod.clock,
      config: { webhooks: { allowPrivate: false } },
      send: sender.send,
    }).customTools;
    const from = receiver.received.length;
    try {
      const outcome = await service.invoke(
        owner,
        declare(service, { url: `http://tools.example.com:${port}/orders` }),
        { order: '1234' },
        call,
        variables,
      );
      expect(outcome).toMatchObject({
        ok: false,
        error: "the tool's address was refused: tools.example.com resolves to 127.0.0.1, which is not a public address",
      });
    } finally {
      await sender.close();
    }
    expect(since(from)).toHaveLength(0);
  });
});
