// The Calendly adapter against a local Calendly-speaking server, and the
// offline sandbox stand-in, which must follow the same rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { CalendlySchedulingProvider } from '../../src/providers/scheduling/calendly.js';
import { SandboxSchedulingProvider } from '../../src/providers/scheduling/sandbox.js';
import { type TestApp, createTestApp } from '../support/app.js';
import { type CalendlyFake, startCalendlyFake } from '../support/calendly-fake.js';
import { bearer, createVerifiedUser } from '../support/factories.js';

let fake: CalendlyFake;
beforeAll(async () => {
  fake = await startCalendlyFake({ pageSize: 1 });
});
afterAll(() => fake.close());

async function error(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('CalendlySchedulingProvider', () => {
  const calendly = () => new CalendlySchedulingProvider(fake.apiBase);

  it('reads the token owner and every page of their event types', async () => {
    const user = await calendly().currentUser(fake.token);
    expect(user).toEqual({
      uri: fake.userUri,
      name: 'Acme Sales',
      schedulingUrl: fake.schedulingUrl,
      timezone: 'Europe/London',
    });
    const types = await calendly().listEventTypes(fake.token, user.uri);
    expect(types.map((t) => t.slug)).toEqual(['15min', '30min', 'discovery-call']);
    expect(types[2]).toEqual({
      uri: fake.eventTypes[2].uri,
      name: 'Discovery Call',
      slug: 'discovery-call',
      schedulingUrl: 'https://calendly.com/acme-sales/discovery-call',
      durationMinutes: 45,
      active: true,
    });
  });

  it('turns 401 into provider_refused (400) and an unreachable API into provider_error (502)', async () => {
    expect(await error(calendly().currentUser('wrong'))).toMatchObject({ code: 'provider_refused', status: 400 });
    expect(await error(new CalendlySchedulingProvider('http://127.0.0.1:9').currentUser(fake.token))).toMatchObject({
      code: 'provider_error',
      status: 502,
    });
  });

  it("turns a refused range into provider_error carrying Calendly's message", async () => {
    const past = new Date(Date.now() - 86_400_000);
    const err = await error(calendly().availableTimes(fake.token, fake.eventTypes[0].uri, past, new Date()));
    expect(err).toMatchObject({ code: 'provider_error', message: expect.stringContaining('must be in the future') });
  });

  it('lists available times and creates single-use links', async () => {
    const from = new Date(Date.parse(fake.slots[0]) - 1000);
    const slots = await calendly().availableTimes(
      fake.token,
      fake.eventTypes[0].uri,
      from,
      new Date(from.getTime() + 86_400_000),
    );
    expect(slots.map((s) => s.startTime)).toEqual(fake.slots.slice(0, 12));
    expect(slots[0].schedulingUrl).toContain('https://calendly.com/acme-sales/15min/');
    const link = await calendly().createBookingLink(fake.token, fake.eventTypes[0].uri);
    expect(link.bookingUrl).toBe(fake.links.at(-1)!.booking_url);
  });
});

describe('SandboxSchedulingProvider', () => {
  const sandbox = new SandboxSchedulingProvider();

  it('refuses tokens beginning with "invalid" and gives every other token a consistent user with three event types', async () => {
    expect(await error(sandbox.currentUser('invalid-token'))).toMatchObject({ code: 'provider_refused' });
    const a = await sandbox.currentUser('tok-a');
    expect(await sandbox.currentUser('tok-a')).toEqual(a);
    expect((await sandbox.currentUser('tok-b')).uri).not.toBe(a.uri);
    const types = await sandbox.listEventTypes('tok-a', a.uri);
    expect(types.map((t) => t.slug)).toEqual(['15min', '30min', '60min']);
    expect(await sandbox.listEventTypes('tok-b', a.uri)).toEqual([]);
  });

  it('offers the same weekday office-hour slots every time, and none outside them', async () => {
    const from = new Date('2030-01-07T00:00:00Z'); // a Monday
    const to = new Date('2030-01-14T00:00:00Z');
    const first = await sandbox.availableTimes('tok', 'uri-1', from, to);
    expect(await sandbox.availableTimes('tok', 'uri-1', from, to)).toEqual(first);
    expect(first.length).toBeGreaterThan(20);
    expect(first.length).toBeLessThan(40);
    for (const slot of first) {
      const at = new Date(slot.startTime);
      expect(at.getUTCDay()).toBeGreaterThanOrEqual(1);
      expect(at.getUTCDay()).toBeLessThanOrEqual(5);
      expect(at.getUTCHours()).toBeGreaterThanOrEqual(9);
      expect(at.getUTCHours()).toBeLessThan(17);
      expect(at.getUTCMinutes()).toBe(0);
    }
  });
});

describe('SandboxSchedulingProvider event types', () => {
  const sandbox = new SandboxSchedulingProvider();

  it("accepts any event type of the given URL or slug, consistently: a real account's URL is not refused offline", async () => {
    const user = await sandbox.currentUser('tok-a');
    const url = 'https://calendly.com/acme-sales/30min-intro';
    const found = await sandbox.findEventType('tok-a', user, url);
    expect(found).toMatchObject({
      slug: '30min-intro',
      name: '30min Intro',
      schedulingUrl: url,
      durationMinutes: 30,
      active: true,
    });
    expect(await sandbox.findEventType('tok-a', user, `${url}/`)).toEqual(found);
    expect((await sandbox.findEventType('tok-a', user, '30min-intro'))?.uri).toBe(found!.uri);
    expect(await sandbox.findEventType('tok-a', user, 'https://calendly.com/acme/discovery-call')).toMatchObject({
      slug: 'discovery-call',
      name: 'Discovery Call',
    });
    expect((await sandbox.findEventType('tok-a', user, 'team-sync_45min'))?.durationMinutes).toBe(45);
    // Another token's user gets another event type uri for the same slug, and cannot use this user.
    const other = await sandbox.currentUser('tok-b');
    expect((await sandbox.findEventType('tok-b', other, url))!.uri).not.toBe(found!.uri);
    expect(await sandbox.findEventType('tok-b', user, url)).toBeNull();
  });

  it('refuses references that name no slug, and slugs beginning with "invalid" (to try refusals)', async () => {
    const user = await sandbox.currentUser('tok-a');
    for (const ref of [
      'https://calendly.com/',
      'invalid-meeting',
      'https://calendly.com/acme/invalid',
      'not a slug',
      '',
    ]) {
      expect(await sandbox.findEventType('tok-a', user, ref), ref).toBeNull();
    }
  });
});

describe('integrations on the sandbox stand-in', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('validates offline: any token and any event type URL or slug; refused tokens and "invalid…" slugs are 400', async () => {
    const user = await createVerifiedUser(t);
    const put = (data: Record<string, string>) =>
      t.app.inject({
        method: 'PUT',
        url: '/api/integrations',
        headers: bearer(user.token),
        payload: { type: 'calendly', data },
      });
    const ok = await put({ token: 'sandbox-token-123456', eventTypeUrl: 'https://calendly.com/anyone/30min' });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().data).toMatchObject({
      eventTypeSlug: '30min',
      eventTypeName: '30 Minute Meeting',
      accessToken: 'sand…3456',
      schedulingUrl: 'https://calendly.com/anyone/30min',
    });
    const bySlug = await put({ token: 'sandbox-token-123456', eventType: '30min' });
    expect(bySlug.json().data.schedulingUrl).toMatch(
      /^https:\/\/calendly\.sandbox\.invalid\/sandbox-[0-9a-f]{8}\/30min$/,
    );
    expect(bySlug.json().data.eventTypeUri).toBe(ok.json().data.eventTypeUri);
    expect((await put({ token: 'invalid-token-123456', eventType: '30min' })).json().code).toBe('provider_refused');
    const real = await put({
      token: 'sandbox-token-123456',
      eventTypeUrl: 'https://calendly.com/acme-sales/30min-intro',
    });
    expect(real.statusCode, real.body).toBe(200);
    expect(real.json().data).toMatchObject({
      eventTypeSlug: '30min-intro',
      eventTypeName: '30min Intro',
      schedulingUrl: 'https://calendly.com/acme-sales/30min-intro',
    });
    const unknown = await put({ token: 'sandbox-token-123456', eventType: 'invalid-meeting' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().code).toBe('invalid_input');

    const { integrations } = t.services.integrations;
    const availability = await integrations.invoke(user.id, ok.json().id, 'check_availability', { days: 7 });
    const slots = availability.slots as Array<{ start_time: string }>;
    expect(slots.length).toBeGreaterThan(0);
    const booked = await integrations.invoke(user.id, ok.json().id, 'book_meeting', {
      start_time: slots[0].start_time,
      name: 'Ada',
      email: 'ada@example.com',
    });
    expect(booked).toMatchObject({
      status: 'link_created',
      booking_url: expect.stringMatching(/^https:\/\/calendly\.sandbox\.invalid\/d\//),
    });
  });
});
