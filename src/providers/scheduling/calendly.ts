// Calendly API v2: GET /users/me, GET /event_types?user=,
// GET /event_type_available_times, POST /scheduling_links; Bearer token (a
// personal access token or OAuth token of the integration's owner).
// CALENDLY_API_BASE points it at a local server in tests.
import { AppError } from '../../http/errors.js';
import { bufferResponse, createOperatorHttp } from '../../lib/outbound-http.js';
import type { AvailableSlot, BookingLink, EventType, SchedulingProvider, SchedulingUser } from './interface.js';
import { matchEventType } from './match.js';

const MAX_EVENT_TYPE_PAGES = 20;

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export class CalendlySchedulingProvider implements SchedulingProvider {
  readonly name = 'calendly';
  readonly sandbox = false;
  /** @param apiBase https://api.calendly.com, or a local server in tests. */
  private readonly http = createOperatorHttp({ timeoutMs: 15_000, maxBytes: 5 * 1024 * 1024 });
  constructor(private readonly apiBase: string) {}

  async currentUser(token: string): Promise<SchedulingUser> {
    const body = await this.json(token, 'GET', '/users/me');
    const resource = (body as { resource?: Record<string, unknown> }).resource ?? {};
    const uri = str(resource.uri);
    if (!uri) throw new AppError('provider_error', 'Calendly answered /users/me without a user uri');
    return {
      uri,
      name: str(resource.name),
      schedulingUrl: str(resource.scheduling_url),
      timezone: str(resource.timezone),
    };
  }

  async findEventType(token: string, user: SchedulingUser, ref: string): Promise<EventType | null> {
    return matchEventType(await this.listEventTypes(token, user.uri), ref);
  }

  async listEventTypes(token: string, userUri: string): Promise<EventType[]> {
    const types: EventType[] = [];
    let path: string | null = `/event_types?${new URLSearchParams({ user: userUri, count: '100' })}`;
    for (let page = 0; path && page < MAX_EVENT_TYPE_PAGES; page++) {
      const body = (await this.json(token, 'GET', path)) as {
        collection?: Array<Record<string, unknown>>;
        pagination?: { next_page?: unknown };
      };
      for (const item of body.collection ?? []) {
        const uri = str(item.uri);
        const schedulingUrl = str(item.scheduling_url);
        if (!uri || !schedulingUrl) continue;
        types.push({
          uri,
          name: str(item.name) ?? str(item.slug) ?? uri,
          slug: str(item.slug) ?? schedulingUrl.split('/').pop() ?? '',
          schedulingUrl,
          durationMinutes: typeof item.duration === 'number' ? item.duration : null,
          active: item.active !== false,
        });
      }
      path = this.samePath(str(body.pagination?.next_page));
    }
    return types;
  }

  async availableTimes(token: string, eventTypeUri: string, start: Date, end: Date): Promise<AvailableSlot[]> {
    const query = new URLSearchParams({
      event_type: eventTypeUri,
      start_time: start.toISOString(),
      end_time: end.toISOString(),
    });
    const body = (await this.json(token, 'GET', `/event_type_available_times?${query}`)) as {
      collection?: Array<Record<string, unknown>>;
    };
    const slots: AvailableSlot[] = [];
    for (const item of body.collection ?? []) {
      const startTime = str(item.start_time);
      if (!startTime || (item.status !== undefined && item.status !== 'available')) continue;
      slots.push({ startTime: new Date(startTime).toISOString(), schedulingUrl: str(item.scheduling_url) ?? '' });
    }
    return slots;
  }

  async createBookingLink(token: string, eventTypeUri: string): Promise<BookingLink> {
    const body = (await this.json(token, 'POST', '/scheduling_links', {
      max_event_count: 1,
      owner: eventTypeUri,
      owner_type: 'EventType',
    })) as {
      resource?: { booking_url?: unknown };
    };
    const bookingUrl = str(body.resource?.booking_url);
    if (!bookingUrl) throw new AppError('provider_error', 'Calendly answered /scheduling_links without a booking_url');
    return { bookingUrl };
  }

  /** A next_page link is followed only on the configured API (never to another host the answer names). */
  private samePath(next: string | null): string | null {
    if (!next) return null;
    try {
      const url = new URL(next);
      const base = new URL(this.apiBase);
      return url.origin === base.origin
        ? `${url.pathname.slice(base.pathname.replace(/\/$/, '').length)}${url.search}`
        : null;
    } catch {
      return null;
    }
  }

  private async json(token: string, method: 'GET' | 'POST', path: string, payload?: unknown): Promise<unknown> {
    const res = await this.request(token, method, path, payload);
    const body = (await res.json().catch(() => null)) as { message?: unknown; title?: unknown } | null;
    if (res.status === 401 || res.status === 403) {
      throw new AppError(
        'provider_refused',
        `Calendly refused the access token${str(body?.message) ? `: ${body!.message}` : ''}`,
      );
    }
    if (!res.ok || body === null) {
      throw new AppError(
        'provider_error',
        `Calendly answered HTTP ${res.status}${str(body?.message) ? `: ${body!.message}` : ''}`,
      );
    }
    return body;
  }

  /** The one HTTP call of this adapter, through the shared outbound client (CALENDLY_API_BASE is the operator's). */
  private async request(token: string, method: 'GET' | 'POST', path: string, payload?: unknown): Promise<Response> {
    try {
      const res = await this.http(`${this.apiBase}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
        body: payload ? JSON.stringify(payload) : undefined,
      });
      return await bufferResponse(res);
    } catch (err) {
      throw new AppError('provider_error', `Calendly unreachable: ${(err as Error).message}`);
    }
  }
}
