// POST /api/connect against the sandbox connector and a real local connector
// (SSE and NDJSON, slow, broken off): records land encrypted with the store's
// default key, one object_created event each, counts in the answer.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type ConnectorFake, fakeRecord, startConnectorFake } from '../../support/connector-fake.js';
import { bearer, createVerifiedUser } from '../../support/factories.js';
import { client } from '../data/support.js';
import { eventually, originOf, stream } from '../events/support.js';
import { decrypt, recordsOf, storeOf } from './support.js';

describe('POST /api/connect with the sandbox connector', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('writes sample records for the store, encrypted with its default key, one per params.limit', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/connect', { repository: 'contacts', path: '/contacts', params: { limit: 5 } });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(res.headers['x-objects-written']).toBe('5');
    expect(res.headers['x-frames-skipped']).toBe('0');
    expect(res.headers['x-credits-granted']).toBeUndefined();
    const { store, children, records } = await recordsOf(api, 'contacts');
    expect(children).toHaveLength(5);
    for (const child of children) {
      expect(child.keyId).toBe(store.keyId);
      expect(child.relatedId).toBe(store.id);
      expect(child.iv).toMatch(/^[0-9a-f]{24}$/);
    }
    expect(new Set(children.map((c) => c.iv)).size).toBe(5);
    for (const r of records) {
      expect(r.phone).toMatch(/^\+[1-9]\d{7,14}$/);
      expect(r.email).toMatch(/^[^@\s]+@[^@\s]+\.[a-z]+$/);
      expect(typeof r.firstName).toBe('string');
      expect(typeof r.company).toBe('string');
    }
  });

  it('defaults to 10 records, caps params.limit at 1,000, and shapes records after the store', async () => {
    const api = client(t, await createVerifiedUser(t));
    expect((await api.post('/api/connect', { repository: 'tasks', path: '/tasks' })).headers['x-objects-written']).toBe(
      '10',
    );
    const tasks = await recordsOf(api, 'tasks');
    expect(
      tasks.records.every((r) => typeof r.title === 'string' && ['open', 'in_progress', 'done'].includes(r.status)),
    ).toBe(true);
    const big = await api.post('/api/connect', {
      repository: 'campaigns',
      path: '/campaigns',
      params: { limit: 5000 },
    });
    expect(big.statusCode).toBe(204);
    expect(big.headers['x-objects-written']).toBe('1000');
    const store = await storeOf(api, 'campaigns');
    expect((await api.get(`/api/objects/${store.id}/related`)).json()).toHaveLength(1000);
  });

  it('refuses an unknown repository with the list of stores, and a path that is not a connector path', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/connect', { repository: 'leads', path: '/x', params: {} });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_input');
    expect(res.json().message).toContain(
      'contacts, calls, agents, tasks, conversational-pathways, campaigns, sms-messages, performance-metrics',
    );
    for (const path of ['x', '/../admin', '//evil.example/x', '/a b']) {
      const bad = await api.post('/api/connect', { repository: 'contacts', path, params: {} });
      expect(bad.statusCode, path).toBe(path === '//evil.example/x' ? 204 : 400);
    }
    expect((await api.post('/api/connect', { path: '/x' })).statusCode).toBe(400);
  });

  it('needs data-plane authentication', async () => {
    const user = await createVerifiedUser(t);
    await t.services.auth.users.update(user.id, { phone_verified: 0 });
    const res = await client(t, user).post('/api/connect', { repository: 'contacts', path: '/x', params: {} });
    expect(res.statusCode).toBe(403);
    expect(
      (await t.app.inject({ method: 'POST', url: '/api/connect', payload: { repository: 'contacts', path: '/x' } }))
        .statusCode,
    ).toBe(401);
  });
});

describe('POST /api/connect with a real connector over HTTP', () => {
  let t: TestApp;
  let fake: ConnectorFake;
  beforeAll(async () => {
    fake = await startConnectorFake();
    t = await createTestApp({
      env: { CONNECTOR_URL: `${fake.url}/`, CONNECTOR_TOKEN: 'conn-secret', CONNECTOR_IDLE_TIMEOUT_SECONDS: '30' },
    });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('streams SSE (split frames, multi-line data, CRLF, comments), skips a frame that is not JSON, and sends path, params and token', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/connect', {
      repository: 'contacts',
      path: '/records',
      params: { format: 'sse', count: 6, junk: true, filter: { city: 'Berlin' } },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-objects-written']).toBe('6');
    expect(res.headers['x-frames-skipped']).toBe('1');
    const request = fake.requests.at(-1)!;
    expect(request).toMatchObject({
      path: '/records',
      authorization: 'Bearer conn-secret',
      params: { format: 'sse', count: 6, junk: true, filter: { city: 'Berlin' } },
    });
    expect(request.accept).toContain('text/event-stream');
    const { records } = await recordsOf(api, 'contacts');
    expect(records).toEqual([0, 1, 2, 3, 4, 5].map((i) => fakeRecord(i)));
  });

  it('streams NDJSON that arrives slowly, in pieces', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/connect', {
      repository: 'sms-messages',
      path: '/slow',
      params: { format: 'ndjson', count: 4, delayMs: 30, junk: true },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-objects-written']).toBe('4');
    expect(res.headers['x-frames-skipped']).toBe('1');
    expect((await recordsOf(api, 'sms-messages')).records).toEqual([0, 1, 2, 3].map((i) => fakeRecord(i, '/slow')));
  });

  it('delivers one object_created per record to a subscriber on a real socket, decryptable with the store key', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const store = await storeOf(api, 'agents');
    const sub = await stream(t, user.token, `object_created?related_object_id=${store.id}`);
    try {
      const res = await api.post('/api/connect', {
        repository: 'agents',
        path: '/records',
        params: { format: 'ndjson', count: 25 },
      });
      expect(res.headers['x-objects-written']).toBe('25');
      const events = await sub.waitForEvents(25);
      const payloads = events.map((e) => JSON.parse(e.data));
      expect(payloads.map((p) => JSON.parse(decrypt(store.key, p)))).toEqual(
        Array.from({ length: 25 }, (_, i) => fakeRecord(i)),
      );
      for (const p of payloads)
        expect(p).toMatchObject({ key_id: store.keyId, related_object_id: store.id, metadata: { kind: 'object' } });
      expect(new Set(payloads.map((p) => p.id)).size).toBe(25);
    } finally {
      sub.close();
    }
  });

  it('a connector that breaks off mid-stream ends the job: 502 with the count, what was written stays', async () => {
    const api = client(t, await createVerifiedUser(t));
    for (const format of ['sse', 'ndjson']) {
      const res = await api.post('/api/connect', {
        repository: 'calls',
        path: '/broken',
        params: { format, count: 10, failAfter: 4 },
      });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ code: 'provider_error', written: 4, skipped: 0 });
      expect(res.headers['x-objects-written']).toBe('4');
    }
    expect((await recordsOf(api, 'calls')).records).toEqual(
      [...[0, 1, 2, 3], ...[0, 1, 2, 3]].map((i) => fakeRecord(i, '/broken')),
    );
  });

  it('the client going away closes the connector stream; what was written stays', async () => {
    const user = await createVerifiedUser(t);
    const api = client(t, user);
    const store = await storeOf(api, 'campaigns');
    const origin = await originOf(t);
    const req = httpRequest(`${origin}/api/connect`, {
      method: 'POST',
      headers: { ...bearer(user.token), 'content-type': 'application/json' },
    });
    req.on('error', () => {});
    req.end(
      JSON.stringify({
        repository: 'campaigns',
        path: '/endless',
        params: { format: 'ndjson', count: 1000, hangAfter: 3 },
      }),
    );
    await eventually(
      async () => (await api.get(`/api/objects/${store.id}/related`)).json().length === 3,
      5000,
      'three records written',
    );
    expect(fake.openResponses()).toBe(1);
    req.destroy();
    // The idle timeout here is 30 s: only the client's leaving can close it within 10 s.
    await eventually(() => fake.openResponses() === 0, 10_000, 'the connector connection closed');
    expect((await api.get(`/api/objects/${store.id}/related`)).json()).toHaveLength(3);
  });

  it('a connector that refuses is 502 with nothing written', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/connect', { repository: 'calls', path: '/refuse', params: {} });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'provider_error', written: 0 });
    expect(res.json().message).toContain('503');
  });

  it('Idempotency-Key: a retry replays the answer without streaming again; another request with the key is 422', async () => {
    const user = await createVerifiedUser(t);
    const body = { repository: 'tasks', path: '/records', params: { format: 'ndjson', count: 3 } };
    const post = (payload: object, key = 'connect-once-1') =>
      t.app.inject({
        method: 'POST',
        url: '/api/connect',
        headers: { ...bearer(user.token), 'idempotency-key': key },
        payload,
      });
    const calls = fake.requests.length;
    const first = await post(body);
    expect(first.statusCode).toBe(204);
    expect(first.headers['x-objects-written']).toBe('3');
    const retry = await post(body);
    expect(retry.statusCode).toBe(204);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    // The documented count headers are replayed with the stored answer.
    expect(retry.headers['x-objects-written']).toBe('3');
    expect(retry.headers['x-frames-skipped']).toBe('0');
    expect(fake.requests.length).toBe(calls + 1);
    expect((await recordsOf(client(t, user), 'tasks')).children).toHaveLength(3);
    const other = await post({ ...body, params: { format: 'ndjson', count: 4 } });
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('idempotency_mismatch');
    expect(fake.requests.length).toBe(calls + 1);
  });
});

describe('POST /api/connect: a silent connector', () => {
  let t: TestApp;
  let fake: ConnectorFake;
  beforeAll(async () => {
    fake = await startConnectorFake();
    t = await createTestApp({ env: { CONNECTOR_URL: fake.url, CONNECTOR_IDLE_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(async () => {
    await t.close();
    await fake.close();
  });

  it('a connector silent for CONNECTOR_IDLE_TIMEOUT_SECONDS ends the job: 502, what arrived is written', async () => {
    const api = client(t, await createVerifiedUser(t));
    const res = await api.post('/api/connect', {
      repository: 'tasks',
      path: '/quiet',
      params: { format: 'sse', count: 5, hangAfter: 2 },
    });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'provider_error', written: 2 });
    expect(res.json().message).toContain('sent nothing for 1000 ms');
    expect((await recordsOf(api, 'tasks')).records).toEqual([0, 1].map((i) => fakeRecord(i, '/quiet')));
    await eventually(() => fake.openResponses() === 0, 5000, 'the connector connection closed');
  });
});
