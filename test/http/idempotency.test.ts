// The Idempotency-Key route option, on a small app with one counting route,
// over the real database (SQLite, or PostgreSQL in CI) and two instances.
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAuth } from '../../src/http/auth.js';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { AppError } from '../../src/http/errors.js';
import { installIdempotency } from '../../src/http/idempotency.js';
import { ErrorResponse, errors } from '../../src/http/schemas.js';
import { createValidatorCompiler } from '../../src/http/validation.js';
import { canonicalJson } from '../../src/modules/platform/idempotency.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type TestUser, bearer, createVerifiedUser } from '../support/factories.js';

interface Counter {
  runs: number;
  /** While set, handlers wait for it: a request "in flight". */
  gate: Promise<void> | null;
}

async function chargeApp(t: TestApp, counter: Counter): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.setValidatorCompiler(createValidatorCompiler(() => app.getSchemas()));
  installErrorHandler(app);
  app.addSchema(ErrorResponse);
  installAuth(app, t.services.auth.authenticator);
  installIdempotency(app, t.services.platform.idempotency);
  app.post(
    '/charge',
    {
      config: { auth: 'verified', idempotent: true },
      schema: {
        body: Type.Object({ amount: Type.Integer() }),
        response: { 200: Type.Object({ id: Type.String(), amount: Type.Integer() }), ...errors(400) },
      },
    },
    async (request) => {
      counter.runs += 1;
      const run = counter.runs;
      if (counter.gate) await counter.gate;
      const { amount } = request.body as { amount: number };
      if (amount < 0) throw new AppError('invalid_input', 'amount must not be negative');
      return { id: `ch_${run}`, amount };
    },
  );
  app.post('/send', { config: { auth: 'verified', idempotent: true } }, async (_request, reply) => {
    counter.runs += 1;
    return reply.status(204).send();
  });
  // Documents X-Sent-Id on its 204, so a replay must carry it; X-Undocumented is not kept.
  app.post(
    '/send-with-id',
    {
      config: { auth: 'verified', idempotent: true },
      schema: { response: { 204: Type.Null({ headers: { 'x-sent-id': Type.String() } }) } },
    },
    async (_request, reply) => {
      counter.runs += 1;
      return reply.status(204).header('x-sent-id', `sent_${counter.runs}`).header('x-undocumented', 'yes').send();
    },
  );
  await app.ready();
  return app;
}

let t: TestApp;
let t2: TestApp;
let app: FastifyInstance;
let app2: FastifyInstance;
let user: TestUser;
let other: TestUser;
const counter: Counter = { runs: 0, gate: null };
let n = 0;
const freshKey = () => `key-${Date.now()}-${++n}`;

const charge = (target: FastifyInstance, key: string | null, amount: number, who = user) =>
  target.inject({
    method: 'POST',
    url: '/charge',
    headers: { ...bearer(who.token), ...(key ? { 'idempotency-key': key } : {}) },
    payload: { amount },
  });

beforeAll(async () => {
  t = await createTestApp();
  t2 = await createTestApp({ shareDatabaseWith: t, clock: t.clock });
  app = await chargeApp(t, counter);
  app2 = await chargeApp(t2, counter);
  // API keys, not sessions: they do not expire while tests move the clock by a day.
  const withApiKey = async (u: TestUser): Promise<TestUser> => {
    const res = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: bearer(u.token),
      payload: { name: 'idempotency test' },
    });
    return { ...u, token: res.json().key };
  };
  user = await withApiKey(await createVerifiedUser(t));
  other = await withApiKey(await createVerifiedUser(t));
});
afterAll(async () => {
  await app?.close();
  await app2?.close();
  await t2?.close();
  await t?.close();
});

describe('Idempotency-Key', () => {
  it('runs every request without a key', async () => {
    const before = counter.runs;
    const a = await charge(app, null, 5);
    const b = await charge(app, null, 5);
    expect(a.json().id).not.toBe(b.json().id);
    expect(counter.runs - before).toBe(2);
  });

  it('replays the headers the route documents on its success answer, on another instance too', async () => {
    const key = freshKey();
    const send = (target: FastifyInstance) =>
      target.inject({
        method: 'POST',
        url: '/send-with-id',
        headers: { ...bearer(user.token), 'idempotency-key': key },
      });
    const before = counter.runs;
    const first = await send(app);
    expect(first.statusCode).toBe(204);
    expect(first.headers['x-sent-id']).toBe(`sent_${before + 1}`);
    const retry = await send(app2);
    expect(retry.statusCode).toBe(204);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['x-sent-id']).toBe(first.headers['x-sent-id']);
    expect(retry.headers['x-undocumented']).toBeUndefined();
    expect(counter.runs).toBe(before + 1);
  });

  it('replays the first answer for a retry with the same key, marked Idempotent-Replayed', async () => {
    const key = freshKey();
    const first = await charge(app, key, 20);
    const runs = counter.runs;
    const retry = await charge(app, key, 20);
    expect(first.statusCode).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual(first.json());
    expect(retry.headers['content-type']).toContain('application/json');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(counter.runs).toBe(runs);
  });

  it('replays on another instance sharing the database', async () => {
    const key = freshKey();
    const first = await charge(app, key, 7);
    const runs = counter.runs;
    const retry = await charge(app2, key, 7);
    expect(retry.json()).toEqual(first.json());
    expect(counter.runs).toBe(runs);
  });

  it('treats a body with its keys in another order as the same request', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      canonicalJson({ a: { c: null, d: [1, { y: 2, z: 1 }] }, b: 1 }),
    );
  });

  it('answers 422 idempotency_mismatch for the same key with another body or another route, and runs nothing', async () => {
    const key = freshKey();
    await charge(app, key, 20);
    const runs = counter.runs;
    const otherBody = await charge(app, key, 21);
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json()).toMatchObject({ code: 'idempotency_mismatch' });
    const otherRoute = await app.inject({
      method: 'POST',
      url: '/send',
      headers: { ...bearer(user.token), 'idempotency-key': key },
    });
    expect(otherRoute.statusCode).toBe(422);
    expect(counter.runs).toBe(runs);
  });

  it('keeps keys per user: another user with the same key runs their own request', async () => {
    const key = freshKey();
    const mine = await charge(app, key, 3);
    const theirs = await charge(app, key, 3, other);
    expect(theirs.statusCode).toBe(200);
    expect(theirs.json().id).not.toBe(mine.json().id);
  });

  it('answers 409 idempotency_in_progress with Retry-After while the first request runs, then replays it', async () => {
    const key = freshKey();
    let open!: () => void;
    counter.gate = new Promise((resolve) => (open = resolve));
    const first = charge(app, key, 9);
    // Wait until the first request is inside its handler (it holds the key then).
    while (counter.runs === 0 || !(await t.services.platform.idempotency['store'].find(user.id, key)))
      await new Promise((r) => setTimeout(r, 5));
    const during = await charge(app2, key, 9);
    expect(during.statusCode).toBe(409);
    expect(during.json()).toMatchObject({ code: 'idempotency_in_progress' });
    expect(during.headers['retry-after']).toBe('1');
    counter.gate = null;
    open();
    const done = await first;
    const after = await charge(app, key, 9);
    expect(after.json()).toEqual(done.json());
  });

  it('runs a key exactly once when many retries arrive at once on two instances', async () => {
    const key = freshKey();
    const runs = counter.runs;
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => charge(i % 2 ? app2 : app, key, 50)));
    expect(counter.runs - runs).toBe(1);
    const ok = answers.filter((a) => a.statusCode === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((a) => a.json().id)).size).toBe(1);
    for (const a of answers) expect([200, 409]).toContain(a.statusCode);
  });

  it('does not keep error answers: a retry with the same key runs again', async () => {
    const key = freshKey();
    const refused = await charge(app, key, -1);
    expect(refused.statusCode).toBe(400);
    const runs = counter.runs;
    const again = await charge(app, key, -1);
    expect(again.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(counter.runs).toBe(runs + 1);
  });

  it('replays an empty 204 answer', async () => {
    const key = freshKey();
    const send = () =>
      app.inject({ method: 'POST', url: '/send', headers: { ...bearer(user.token), 'idempotency-key': key } });
    const first = await send();
    const runs = counter.runs;
    const retry = await send();
    expect(first.statusCode).toBe(204);
    expect(retry.statusCode).toBe(204);
    expect(retry.body).toBe('');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(counter.runs).toBe(runs);
  });

  it('forgets an answer after 24 hours', async () => {
    const key = freshKey();
    const first = await charge(app, key, 11);
    t.clock.advance(24 * 3600_000 + 1);
    const later = await charge(app, key, 11);
    expect(later.statusCode).toBe(200);
    expect(later.json().id).not.toBe(first.json().id);
    await t.services.platform.idempotency.purgeExpired(t.clock.now() + 24 * 3600_000 + 1);
    expect(await t.services.platform.idempotency['store'].find(user.id, key)).toBeUndefined();
  });

  it('lets a retry take over a key whose first request was abandoned (its process died) after 10 minutes', async () => {
    const key = freshKey();
    const fingerprint = t.services.platform.idempotency.fingerprint('POST', '/charge', { amount: 4 });
    expect(await t.services.platform.idempotency.begin(user.id, key, fingerprint)).toEqual({ kind: 'run' });
    const stuck = await charge(app, key, 4);
    expect(stuck.statusCode).toBe(409);
    t.clock.advance(10 * 60_000 + 1);
    const retry = await charge(app, key, 4);
    expect(retry.statusCode).toBe(200);
  });

  it('refuses a malformed key with 400 and runs nothing', async () => {
    const runs = counter.runs;
    for (const key of ['x'.repeat(256), 'has space', 'tab\there']) {
      const res = await charge(app, key, 1);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('invalid_input');
    }
    expect(counter.runs).toBe(runs);
  });

  it('refuses to mount on a route without authentication', async () => {
    const bare = Fastify({ logger: false });
    installIdempotency(bare, t.services.platform.idempotency);
    expect(() => bare.post('/open', { config: { idempotent: true } }, async () => ({}))).toThrow(/need authentication/);
    await bare.close();
  });
});
