// Integrations (spec 4.17, 2.16) through the real Calendly adapter, against a
// local server speaking Calendly's API: validation, aliases, sealing, masking,
// isolation, and the functions call sessions use.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/http/errors.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { type CalendlyFake, startCalendlyFake } from '../../support/calendly-fake.js';
import { type TestUser, bearer, createVerifiedUser, registerUser } from '../../support/factories.js';

let fake: CalendlyFake;
let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  fake = await startCalendlyFake();
  t = await createTestApp({ env: { CALENDLY_API_BASE: fake.apiBase } });
  user = await createVerifiedUser(t);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const put = (data: Record<string, unknown>, who: TestUser = user, type = 'calendly') =>
  t.app.inject({ method: 'PUT', url: '/api/integrations', headers: bearer(who.token), payload: { type, data } });
const list = (who: TestUser = user) =>
  t.app.inject({ method: 'GET', url: '/api/integrations', headers: bearer(who.token) });
const masked = () => `${fake.token.slice(0, 4)}…${fake.token.slice(-4)}`;

async function error(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('PUT /api/integrations (Calendly)', () => {
  it('validates the token and event type with Calendly and stores the sanitized payload, token masked', async () => {
    const res = await put({ pat: fake.token, eventTypeUrl: 'https://calendly.com/acme-sales/30min', extra: 'ignored' });
    expect(res.statusCode).toBe(200);
    const created = res.json();
    expect(created).toEqual({
      id: expect.any(String),
      type: 'calendly',
      data: {
        eventTypeUri: fake.eventTypes[1].uri,
        eventTypeSlug: '30min',
        eventTypeName: '30 Minute Meeting',
        userUri: fake.userUri,
        schedulingUrl: 'https://calendly.com/acme-sales/30min',
        accessToken: masked(),
      },
      createdAt: expect.any(String),
    });
    // Calendly was asked who the token belongs to, then for that user's event types (every page).
    const calls = fake.requests
      .slice(-3)
      .map((r) => `${r.method} ${r.path} ${r.query.user ?? ''} ${r.query.page_token ?? ''}`.trim());
    expect(calls).toEqual(['GET /users/me', `GET /event_types ${fake.userUri}`, `GET /event_types ${fake.userUri} 2`]);
    expect(fake.requests.at(-1)!.authorization).toBe(`Bearer ${fake.token}`);

    // The token is sealed at rest: the row holds neither the token nor any part of it in clear.
    const row = await t.database.db
      .selectFrom('integrations')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(fake.token);
    expect(JSON.stringify(row)).not.toContain(fake.token.slice(-8));
    expect(t.services.platform.secretBox.openText(row.sealed_token)).toBe(fake.token);

    const listed = (await list()).json();
    expect(listed.find((i: { id: string }) => i.id === created.id)).toEqual(created);
  });

  it('accepts every token alias and every event-type alias (URL, API uri, slug)', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ accessToken: fake.token, eventType: 'discovery-call' }, 'discovery-call'],
      [{ apiKey: fake.token, eventTypeSlug: '15min' }, '15min'],
      [{ token: fake.token, eventType: fake.eventTypes[1].uri }, '30min'],
      [{ pat: ` ${fake.token} `, eventTypeUrl: 'HTTPS://Calendly.com/acme-sales/discovery-call/' }, 'discovery-call'],
    ];
    for (const [data, slug] of cases) {
      const res = await put(data);
      expect({ data, status: res.statusCode }).toEqual({ data, status: 200 });
      expect(res.json().data).toMatchObject({ eventTypeSlug: slug, accessToken: masked() });
    }
  });

  it('answers 400 provider_refused for a token Calendly refuses, and stores nothing', async () => {
    const before = (await list()).json().length;
    const res = await put({
      accessToken: 'cal_pat_wrong_token_000000',
      eventTypeUrl: 'https://calendly.com/acme-sales/30min',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'provider_refused', message: expect.stringContaining('access token') });
    expect((await list()).json()).toHaveLength(before);
  });

  it('answers 400 for an unknown event type, an unknown type, non-string data and missing fields', async () => {
    const unknownEvent = await put({
      accessToken: fake.token,
      eventTypeUrl: 'https://calendly.com/acme-sales/no-such-meeting',
    });
    expect(unknownEvent.statusCode).toBe(400);
    expect(unknownEvent.json().message).toContain('15min, 30min, discovery-call');
    const unknownType = await put({ accessToken: fake.token, eventType: '30min' }, user, 'cal.com');
    expect(unknownType.statusCode).toBe(400);
    expect(unknownType.json().message).toContain('unknown integration type');
    const nonString = await put({ accessToken: fake.token, eventType: 30 });
    expect(nonString.statusCode).toBe(400);
    expect((await put({ eventType: '30min' })).json().message).toContain('accessToken, apiKey, token, pat');
    expect((await put({ accessToken: fake.token })).json().message).toContain('eventTypeUrl, eventType, eventTypeSlug');
    const noData = await t.app.inject({
      method: 'PUT',
      url: '/api/integrations',
      headers: bearer(user.token),
      payload: { type: 'calendly' },
    });
    expect(noData.statusCode).toBe(400);
  });

  it('answers 502 when Calendly cannot be reached', async () => {
    const down = await createTestApp({ env: { CALENDLY_API_BASE: 'http://127.0.0.1:9' } });
    try {
      const u = await createVerifiedUser(down);
      const res = await down.app.inject({
        method: 'PUT',
        url: '/api/integrations',
        headers: bearer(u.token),
        payload: { type: 'calendly', data: { accessToken: fake.token, eventType: '30min' } },
      });
      expect(res.statusCode).toBe(502);
      expect(res.json().code).toBe('provider_error');
    } finally {
      await down.close();
    }
  });

  it('needs a verified phone to add one', async () => {
    const unverified = await registerUser(t);
    expect((await put({ accessToken: fake.token, eventType: '30min' }, unverified)).statusCode).toBe(403);
    expect((await list(unverified)).statusCode).toBe(200);
  });
});

describe('isolation and DELETE', () => {
  it("never lists, deletes or invokes another user's integration", async () => {
    const mine = (await put({ accessToken: fake.token, eventType: '30min' })).json();
    const mallory = await createVerifiedUser(t);
    expect((await list(mallory)).json()).toEqual([]);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/api/integrations/${mine.id}`,
      headers: bearer(mallory.token),
    });
    expect(del.statusCode).toBe(404);
    expect(
      (await error(t.services.integrations.integrations.invoke(mallory.id, mine.id, 'check_availability', {}))).code,
    ).toBe('not_found');
    expect((await error(t.services.integrations.integrations.functionsFor(mallory.id, [mine.id]))).code).toBe(
      'not_found',
    );
    expect((await list()).json().map((i: { id: string }) => i.id)).toContain(mine.id);
  });

  it('deletes one integration with 204, then 404', async () => {
    const created = (await put({ accessToken: fake.token, eventType: '15min' })).json();
    const url = `/api/integrations/${created.id}`;
    expect((await t.app.inject({ method: 'DELETE', url, headers: bearer(user.token) })).statusCode).toBe(204);
    expect((await list()).json().map((i: { id: string }) => i.id)).not.toContain(created.id);
    expect((await t.app.inject({ method: 'DELETE', url, headers: bearer(user.token) })).statusCode).toBe(404);
  });
});

describe('integration functions for call sessions', () => {
  it('exposes check_availability and book_meeting with JSON-schema parameters, unique names across integrations', async () => {
    const a = (await put({ accessToken: fake.token, eventType: '30min' })).json();
    const b = (await put({ accessToken: fake.token, eventType: 'discovery-call' })).json();
    const fns = await t.services.integrations.integrations.functionsFor(user.id, [a.id, b.id]);
    expect(fns.map((f) => f.name)).toEqual([
      'check_availability',
      'book_meeting',
      'check_availability_2',
      'book_meeting_2',
    ]);
    expect(fns[3]).toMatchObject({
      function: 'book_meeting',
      integrationId: b.id,
      type: 'calendly',
      description: expect.stringContaining('Discovery Call'),
    });
    expect(fns[1].parameters).toMatchObject({
      type: 'object',
      // name and email are optional: on a phone call they are seldom known, and the link asks for them.
      required: ['start_time'],
      properties: { start_time: { type: 'string', format: 'date-time' }, email: { type: 'string', format: 'email' } },
      additionalProperties: false,
    });
    expect(fns[0].parameters).toMatchObject({
      type: 'object',
      properties: { days: { type: 'integer', minimum: 1, maximum: 7 } },
    });
  });

  it("check_availability answers Calendly's open times; book_meeting checks the slot and returns a prefilled single-use link", async () => {
    const integration = (await put({ accessToken: fake.token, eventType: '30min' })).json();
    const { integrations } = t.services.integrations;
    const availability = await integrations.invoke(user.id, integration.id, 'check_availability', { days: 2 });
    const slots = availability.slots as Array<{ start_time: string }>;
    expect(availability).toMatchObject({ event_type: '30 Minute Meeting', timezone: 'UTC' });
    expect(slots.length).toBeGreaterThan(5);
    expect(slots.every((s) => fake.slots.includes(s.start_time))).toBe(true);
    const asked = fake.requests.at(-1)!;
    expect(asked).toMatchObject({
      path: '/event_type_available_times',
      query: { event_type: integration.data.eventTypeUri },
    });
    expect(Date.parse(asked.query.end_time) - Date.parse(asked.query.start_time)).toBe(2 * 86_400_000);

    const booked = await integrations.invoke(user.id, integration.id, 'book_meeting', {
      start_time: slots[1].start_time,
      name: 'Grace Hopper',
      email: 'grace@example.com',
    });
    expect(booked).toMatchObject({
      status: 'link_created',
      start_time: slots[1].start_time,
      event_type: '30 Minute Meeting',
    });
    const link = new URL(booked.booking_url as string);
    expect(`${link.origin}${link.pathname}`).toBe(fake.links.at(-1)!.booking_url);
    expect(Object.fromEntries(link.searchParams)).toEqual({
      name: 'Grace Hopper',
      email: 'grace@example.com',
      month: slots[1].start_time.slice(0, 7),
      date: slots[1].start_time.slice(0, 10),
    });
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/scheduling_links',
      body: { max_event_count: 1, owner: integration.data.eventTypeUri, owner_type: 'EventType' },
    });
  });

  it('book_meeting on a time that is not free creates no link and offers alternatives', async () => {
    const integration = (await put({ accessToken: fake.token, eventType: '30min' })).json();
    const linksBefore = fake.links.length;
    const odd = new Date(Date.parse(fake.slots[3]) + 3600_000).toISOString();
    const answer = await t.services.integrations.integrations.invoke(user.id, integration.id, 'book_meeting', {
      start_time: odd,
      name: 'Ada',
      email: 'ada@example.com',
    });
    expect(answer).toMatchObject({
      status: 'unavailable',
      alternatives: [fake.slots[4], fake.slots[5], fake.slots[6]],
    });
    expect(fake.links).toHaveLength(linksBefore);
  });

  it('refuses bad arguments and unknown functions with invalid_input', async () => {
    const integration = (await put({ accessToken: fake.token, eventType: '30min' })).json();
    const { integrations } = t.services.integrations;
    expect(
      (
        await error(
          integrations.invoke(user.id, integration.id, 'book_meeting', {
            start_time: 'tomorrow',
            name: 'A',
            email: 'a@example.com',
          }),
        )
      ).message,
    ).toContain('start_time');
    expect(
      (
        await error(
          integrations.invoke(user.id, integration.id, 'book_meeting', {
            start_time: fake.slots[2],
            name: 'A',
            email: 'not-an-email',
          }),
        )
      ).message,
    ).toContain('email');
    expect((await error(integrations.invoke(user.id, integration.id, 'check_availability', { days: 30 }))).code).toBe(
      'invalid_input',
    );
    expect((await error(integrations.invoke(user.id, integration.id, 'cancel_everything', {}))).message).toContain(
      'unknown function',
    );
  });
});
