// A local server speaking the part of Calendly's API v2 the service uses:
// GET /users/me, GET /event_types?user= (paginated), GET
// /event_type_available_times and POST /scheduling_links, with Bearer tokens.
// Answers like Calendly: 401 { title, message } for a refused token, 400
// "Invalid Argument" for ranges Calendly refuses (past start, over 7 days).
// Every request is recorded.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CalendlyRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization: string | undefined;
  body: unknown;
}

export interface CalendlyFake {
  apiBase: string;
  token: string;
  userUri: string;
  schedulingUrl: string;
  eventTypes: Array<{
    uri: string;
    name: string;
    slug: string;
    scheduling_url: string;
    duration: number;
    active: boolean;
  }>;
  /** Every available start time (ISO), filtered by the asked range. */
  slots: string[];
  requests: CalendlyRequest[];
  links: Array<{ owner: string; booking_url: string }>;
  close(): Promise<void>;
}

const API = 'https://api.calendly.com';

export async function startCalendlyFake(options: { pageSize?: number } = {}): Promise<CalendlyFake> {
  const token = `cal_pat_${randomBytes(12).toString('hex')}`;
  const userId = 'AAAABBBBCCCCDDDD';
  const userUri = `${API}/users/${userId}`;
  const schedulingUrl = 'https://calendly.com/acme-sales';
  const eventTypes = ['15min', '30min', 'discovery-call'].map((slug, i) => ({
    uri: `${API}/event_types/ET${i}${userId}`,
    name: slug === 'discovery-call' ? 'Discovery Call' : `${slug.replace('min', '')} Minute Meeting`,
    slug,
    scheduling_url: `${schedulingUrl}/${slug}`,
    duration: [15, 30, 45][i],
    active: true,
  }));
  // Every other hour from tomorrow 00:00 UTC, for ten days.
  const tomorrow = new Date();
  tomorrow.setUTCHours(24, 0, 0, 0);
  const slots = Array.from({ length: 120 }, (_, i) => new Date(tomorrow.getTime() + i * 2 * 3600_000).toISOString());
  const requests: CalendlyRequest[] = [];
  const links: CalendlyFake['links'] = [];
  const pageSize = options.pageSize ?? 2;

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    const query = Object.fromEntries(url.searchParams);
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query,
      authorization: req.headers.authorization,
      body,
    });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    const invalid = (message: string) => json(400, { title: 'Invalid Argument', message, details: [] });
    if (req.headers.authorization !== `Bearer ${token}`)
      return json(401, { title: 'Unauthenticated', message: 'The access token is invalid' });

    if (req.method === 'GET' && url.pathname === '/users/me') {
      return json(200, {
        resource: {
          uri: userUri,
          name: 'Acme Sales',
          slug: 'acme-sales',
          scheduling_url: schedulingUrl,
          timezone: 'Europe/London',
          current_organization: `${API}/organizations/ORG1`,
        },
      });
    }
    if (req.method === 'GET' && url.pathname === '/event_types') {
      if (query.user !== userUri)
        return json(403, {
          title: 'Permission Denied',
          message: 'You do not have permission to access this resource.',
        });
      const start = Number(query.page_token ?? 0);
      const size = Math.min(Number(query.count ?? 20), pageSize);
      const page = eventTypes.slice(start, start + size);
      const next =
        start + size < eventTypes.length
          ? `http://${req.headers.host}/event_types?${new URLSearchParams({ user: userUri, count: String(size), page_token: String(start + size) })}`
          : null;
      return json(200, {
        collection: page,
        pagination: {
          count: page.length,
          next_page: next,
          previous_page: null,
          next_page_token: next ? String(start + size) : null,
        },
      });
    }
    if (req.method === 'GET' && url.pathname === '/event_type_available_times') {
      const type = eventTypes.find((t) => t.uri === query.event_type);
      if (!type)
        return json(404, { title: 'Resource Not Found', message: 'The server could not find the requested resource.' });
      const from = Date.parse(query.start_time ?? '');
      const to = Date.parse(query.end_time ?? '');
      if (!Number.isFinite(from) || !Number.isFinite(to)) return invalid('start_time and end_time are required');
      if (from < Date.now() - 5_000) return invalid('start_time must be in the future');
      if (to <= from || to - from > 7 * 86_400_000) return invalid('date range can be no greater than 1 week (7 days)');
      const collection = slots
        .filter((s) => Date.parse(s) >= from && Date.parse(s) < to)
        .map((s) => ({
          status: 'available',
          invitees_remaining: 1,
          start_time: s,
          scheduling_url: `${type.scheduling_url}/${s}?month=${s.slice(0, 7)}&date=${s.slice(0, 10)}`,
        }));
      return json(200, { collection });
    }
    if (req.method === 'POST' && url.pathname === '/scheduling_links') {
      const owner = body?.owner;
      if (body?.owner_type !== 'EventType' || !eventTypes.some((t) => t.uri === owner))
        return invalid('owner must be an event type of yours');
      if (body?.max_event_count !== 1) return invalid('max_event_count must be 1');
      const booking_url = `https://calendly.com/d/${randomBytes(3).toString('hex')}-${randomBytes(3).toString('hex')}/${eventTypes.find((t) => t.uri === owner)!.slug}`;
      links.push({ owner: owner as string, booking_url });
      return json(201, { resource: { booking_url, owner, owner_type: 'EventType' } });
    }
    json(404, { title: 'Resource Not Found', message: 'The server could not find the requested resource.' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://127.0.0.1:${port}`,
    token,
    userUri,
    schedulingUrl,
    eventTypes,
    slots,
    requests,
    links,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
