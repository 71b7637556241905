// POST /api/events/ticket and GET /api/events/{type}?ticket=… (DESIGN.md
// "Event streams from browser apps on other sites"): a ticket opens one stream
// of its own user without credentials, once, within 60 s; a forged, reused,
// expired or revoked one opens nothing.
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';
import { openSse } from '../../support/sse-client.js';
import { emit, originOf, sleep } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function ticketFor(token: string): Promise<{ ticket: string; expiresAt: string }> {
  const res = await t.app.inject({ method: 'POST', url: '/api/events/ticket', headers: bearer(token) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

async function openWithTicket(path: string, ticket: string, query = '') {
  return openSse(`${await originOf(t)}/api/events/${path}?ticket=${encodeURIComponent(ticket)}${query}`);
}

const refused = (sse: { status: number; body: string }) => ({
  status: sse.status,
  code: sse.body ? JSON.parse(sse.body).code : null,
});

describe('event stream tickets', () => {
  let user: TestUser;
  beforeAll(async () => {
    user = await createVerifiedUser(t);
  });

  it("opens a stream of its own user without credentials: that user's events only, a ticket is not a filter", async () => {
    const other = await createVerifiedUser(t);
    const { ticket, expiresAt } = await ticketFor(user.token);
    expect(Date.parse(expiresAt) - t.clock.now()).toBe(60_000);
    const sse = await openWithTicket('object_deleted', ticket);
    expect(sse.status).toBe(200);
    await sse.waitForComment('connected');
    await emit(t, other.id, [['object_deleted', { object_id: 'theirs', deleted_at: 'x' }]]);
    const [mine] = await emit(t, user.id, [['object_deleted', { object_id: 'mine', deleted_at: 'x' }]]);
    const [event] = await sse.waitForEvents(1);
    expect(event).toEqual({
      id: String(mine),
      event: 'object_deleted',
      data: JSON.stringify({ object_id: 'mine', deleted_at: 'x' }),
    });
    await sleep(100);
    expect(sse.events).toHaveLength(1);
    sse.close();
  });

  it('resumes from ?lastEventId= next to the ticket', async () => {
    const [first, second] = await emit(t, user.id, [
      ['object_deleted', { object_id: 'a', deleted_at: 'x' }],
      ['object_deleted', { object_id: 'b', deleted_at: 'x' }],
    ]);
    const sse = await openWithTicket('object_deleted', (await ticketFor(user.token)).ticket, `&lastEventId=${first}`);
    const [event] = await sse.waitForEvents(1);
    expect(event.id).toBe(String(second));
    sse.close();
  });

  it('is single use, also when two streams race for it', async () => {
    const { ticket } = await ticketFor(user.token);
    const sse = await openWithTicket('all', ticket);
    expect(sse.status).toBe(200);
    sse.close();
    expect(refused(await openWithTicket('all', ticket))).toEqual({ status: 401, code: 'unauthenticated' });

    const raced = (await ticketFor(user.token)).ticket;
    const both = await Promise.all([openWithTicket('all', raced), openWithTicket('all', raced)]);
    expect(both.map((s) => s.status).sort()).toEqual([200, 401]);
    for (const s of both) s.close();
  });

  it('expires 60 s after issue', async () => {
    const fresh = await ticketFor(user.token);
    const stale = await ticketFor(user.token);
    t.clock.advance(59_000);
    const ok = await openWithTicket('all', fresh.ticket);
    expect(ok.status).toBe(200);
    ok.close();
    t.clock.advance(1_000);
    expect(refused(await openWithTicket('all', stale.ticket))).toEqual({ status: 401, code: 'unauthenticated' });
  });

  it('refuses forgeries: a changed user, another key, a session token, garbage', async () => {
    const victim = await createVerifiedUser(t);
    const { ticket } = await ticketFor(user.token);
    const [head, body, signature] = ticket.split('.');
    const claims = decodeJwt(ticket);
    const swapped = Buffer.from(JSON.stringify({ ...claims, sub: victim.id })).toString('base64url');
    expect(refused(await openWithTicket('all', `${head}.${swapped}.${signature}`))).toEqual({
      status: 401,
      code: 'unauthenticated',
    });
    const ownKey = await new SignJWT({ ...claims, sub: victim.id })
      .setProtectedHeader(decodeProtectedHeader(ticket) as { alg: string })
      .sign(new TextEncoder().encode('not the server secret'));
    expect(refused(await openWithTicket('all', ownKey))).toEqual({ status: 401, code: 'unauthenticated' });
    // A session token is no ticket, and a ticket is no session token.
    expect(refused(await openWithTicket('all', victim.token))).toEqual({ status: 401, code: 'unauthenticated' });
    expect((await t.app.inject({ method: 'GET', url: '/api/auth', headers: bearer(ticket) })).statusCode).toBe(401);
    expect(refused(await openWithTicket('all', 'garbage'))).toEqual({ status: 401, code: 'unauthenticated' });
    expect(body).toBeTruthy();
    // The original still works: the forgeries did not spend it.
    const sse = await openWithTicket('all', ticket);
    expect(sse.status).toBe(200);
    sse.close();
  });

  it('is accepted only by the event stream, not in place of credentials elsewhere', async () => {
    const { ticket } = await ticketFor(user.token);
    const res = await t.app.inject({ method: 'GET', url: `/api/root?ticket=${encodeURIComponent(ticket)}` });
    expect(res.statusCode).toBe(401);
  });

  it("needs the stream's own authentication: refused to an unverified user, and to no credential", async () => {
    const unverified = await registerUser(t);
    const res = await t.app.inject({ method: 'POST', url: '/api/events/ticket', headers: bearer(unverified.token) });
    expect([res.statusCode, res.json().code]).toEqual([403, 'phone_not_verified']);
    expect((await t.app.inject({ method: 'POST', url: '/api/events/ticket' })).statusCode).toBe(401);
  });

  it('opens nothing once the session that asked for it has ended, or the API key was deleted', async () => {
    const signedOut = await createVerifiedUser(t);
    const { ticket } = await ticketFor(signedOut.token);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/auth/logout', headers: bearer(signedOut.token) })).statusCode,
    ).toBe(200);
    expect(refused(await openWithTicket('all', ticket))).toEqual({ status: 401, code: 'unauthenticated' });

    const created = await t.app.inject({
      method: 'PUT',
      url: '/api/api-keys',
      headers: bearer(user.token),
      payload: { name: 'tickets' },
    });
    const key = created.json();
    const byKey = await ticketFor(key.key);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/api/api-keys/${key.id}`, headers: bearer(user.token) }))
        .statusCode,
    ).toBeLessThan(300);
    expect(refused(await openWithTicket('all', byKey.ticket))).toEqual({ status: 401, code: 'unauthenticated' });
  });
});
