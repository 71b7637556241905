// Offline stand-in for Calendly with the same rules: a token beginning with
// "invalid" is refused (so refusals can be tried), every other token owns a
// consistent sandbox user (derived from the token). Its listing shows three
// event types (15min, 30min, 60min), but any event type named by URL or slug
// is accepted (DESIGN "Integrations": an event type derived from the URL), so
// a real account's URL such as https://calendly.com/acme-sales/30min-intro
// works offline; only slugs beginning with "invalid" (so unknown event types
// can be tried) and references that name no slug are refused. Available times are weekday slots, 09:00–17:00 UTC,
// the same for the same event type and day on every instance; booking links
// are single-use-looking links under the reserved .invalid domain, so nothing
// ever leaves the machine.
import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import type { AvailableSlot, BookingLink, EventType, SchedulingProvider, SchedulingUser } from './interface.js';
import { matchEventType, normalizeUrl, slugOf } from './match.js';

export const SANDBOX_SCHEDULING_HOST = 'https://calendly.sandbox.invalid';
const API = 'https://api.calendly.sandbox.invalid';
const EVENT_TYPES = [
  { slug: '15min', name: '15 Minute Meeting', duration: 15 },
  { slug: '30min', name: '30 Minute Meeting', duration: 30 },
  { slug: '60min', name: '60 Minute Meeting', duration: 60 },
];

/** "30min-intro" → "30min Intro". */
const nameOf = (slug: string) =>
  slug
    .split(/[-_]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join(' ');
/** Minutes named in a slug ("45min-call", "90-min"), else 30. */
const durationOf = (slug: string) => {
  const minutes = /(\d{1,3})-?min/.exec(slug);
  return minutes ? Number(minutes[1]) : 30;
};

const digest = (value: string, length = 12) => createHash('sha256').update(value).digest('hex').slice(0, length);

export class SandboxSchedulingProvider implements SchedulingProvider {
  readonly name = 'calendly sandbox';
  readonly sandbox = true;

  async currentUser(token: string): Promise<SchedulingUser> {
    this.check(token);
    const id = digest(`user:${token}`);
    return {
      uri: `${API}/users/${id}`,
      name: 'Sandbox Scheduler',
      schedulingUrl: `${SANDBOX_SCHEDULING_HOST}/sandbox-${id.slice(0, 8)}`,
      timezone: 'UTC',
    };
  }

  async listEventTypes(token: string, userUri: string): Promise<EventType[]> {
    const user = await this.currentUser(token);
    if (user.uri !== userUri) return [];
    return EVENT_TYPES.map((t) => ({
      uri: `${API}/event_types/${digest(`${user.uri}/${t.slug}`)}`,
      name: t.name,
      slug: t.slug,
      schedulingUrl: `${user.schedulingUrl}/${t.slug}`,
      durationMinutes: t.duration,
      active: true,
    }));
  }

  async findEventType(token: string, user: SchedulingUser, ref: string): Promise<EventType | null> {
    const own = await this.currentUser(token);
    if (own.uri !== user.uri) return null;
    const url = /^https?:\/\//i.test(ref) ? normalizeUrl(ref) : null;
    const slug = slugOf(ref);
    // Calendly slugs: lower-case letters, digits, dashes (underscores seen in old links).
    if (!/^[a-z0-9][a-z0-9_-]{0,99}$/.test(slug) || slug.startsWith('invalid')) return null;
    const listed = matchEventType(await this.listEventTypes(token, own.uri), ref);
    const base = listed ?? {
      uri: `${API}/event_types/${digest(`${own.uri}/${slug}`)}`,
      name: nameOf(slug),
      slug,
      schedulingUrl: `${own.schedulingUrl}/${slug}`,
      durationMinutes: durationOf(slug),
      active: true,
    };
    // Named by URL: that URL is the event type's page, as it is at Calendly.
    return url ? { ...base, schedulingUrl: url } : base;
  }

  async availableTimes(token: string, eventTypeUri: string, start: Date, end: Date): Promise<AvailableSlot[]> {
    this.check(token);
    const slots: AvailableSlot[] = [];
    const first = new Date(start);
    first.setUTCMinutes(
      first.getUTCMinutes() > 0 || first.getUTCSeconds() > 0 || first.getUTCMilliseconds() > 0 ? 60 : 0,
      0,
      0,
    );
    for (let t = first.getTime(); t < end.getTime(); t += 3600_000) {
      const at = new Date(t);
      const day = at.getUTCDay();
      const hour = at.getUTCHours();
      if (day === 0 || day === 6 || hour < 9 || hour >= 17) continue;
      // About one slot in four is taken, the same ones everywhere.
      if (parseInt(digest(`${eventTypeUri}@${at.toISOString()}`, 2), 16) % 4 === 0) continue;
      slots.push({
        startTime: at.toISOString(),
        schedulingUrl: `${SANDBOX_SCHEDULING_HOST}/slot/${digest(eventTypeUri, 8)}/${at.toISOString()}`,
      });
    }
    return slots;
  }

  async createBookingLink(token: string, eventTypeUri: string): Promise<BookingLink> {
    this.check(token);
    return { bookingUrl: `${SANDBOX_SCHEDULING_HOST}/d/${randomBytes(6).toString('hex')}/${digest(eventTypeUri, 8)}` };
  }

  private check(token: string): void {
    if (token.toLowerCase().startsWith('invalid'))
      throw new AppError(
        'provider_refused',
        'Calendly refused the access token (sandbox: tokens beginning with "invalid" are refused)',
      );
  }
}
