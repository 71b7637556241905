// Live event streams (GET /api/events/{type}); see docs/decisions/events.md.
import { integer, section } from './declare.js';
import type { EventStreamConfig } from './types.js';

const v = {
  maxStreamsPerUser: integer(
    'EVENTS_MAX_STREAMS_PER_USER',
    20,
    1,
    10_000,
    'Open event streams per user and instance; more → 429',
  ),
  keepAliveSeconds: integer('EVENTS_KEEPALIVE_SECONDS', 15, 1, 3600, 'Keep-alive comment interval on event streams'),
  maxBufferedBytes: integer(
    'EVENTS_MAX_BUFFERED_BYTES',
    4 * 1024 * 1024,
    64 * 1024,
    1024 * 1024 * 1024,
    'Unsent bytes a stream may queue before it switches to catching up from the log',
  ),
  maxBufferedTotalBytes: integer(
    'EVENTS_MAX_BUFFERED_TOTAL_BYTES',
    128 * 1024 * 1024,
    1024 * 1024,
    64 * 1024 * 1024 * 1024,
    'Unsent bytes all streams of an instance may queue together; past it, streams with a backlog stop queueing and catch up once drained',
  ),
  recentBytes: integer(
    'EVENTS_RECENT_BYTES',
    16 * 1024 * 1024,
    0,
    4 * 1024 * 1024 * 1024,
    'Recent events kept in memory so streams that fell behind catch up without reading the log (`0`: always the log)',
  ),
  coalesceMs: integer(
    'EVENTS_COALESCE_MS',
    40,
    0,
    1000,
    'A stream that wrote within this many ms gathers what arrives meanwhile into one write (a feed whose round of writes takes longer starts the next as soon as it ends; `0`: no gathering)',
  ),
  slowClientSeconds: integer(
    'EVENTS_SLOW_CLIENT_SECONDS',
    30,
    1,
    3600,
    'A stream whose client reads nothing for this long is closed (it resumes with `Last-Event-ID`)',
  ),
  pollMs: integer(
    'EVENTS_POLL_MS',
    2000,
    50,
    600_000,
    'Safety poll of the event log (delivery is normally woken at once, on PostgreSQL through `NOTIFY`)',
  ),
  gapWaitMs: integer(
    'EVENTS_GAP_WAIT_MS',
    10_000,
    100,
    600_000,
    "PostgreSQL: longest time later events wait for a lower event id whose transaction may still commit (another application's long transaction in the same database can cause such a wait)",
  ),
  reauthSeconds: integer(
    'EVENTS_REAUTH_SECONDS',
    60,
    1,
    86_400,
    'How often an open stream re-checks its token or API key',
  ),
};

export const eventsSection = section<{ events: EventStreamConfig }>('Event streams', v, (read) => ({
  events: {
    maxStreamsPerUser: read(v.maxStreamsPerUser),
    keepAliveMs: read(v.keepAliveSeconds) * 1000,
    maxBufferedBytes: read(v.maxBufferedBytes),
    maxBufferedTotalBytes: read(v.maxBufferedTotalBytes),
    recentBytes: read(v.recentBytes),
    coalesceMs: read(v.coalesceMs),
    slowClientTimeoutMs: read(v.slowClientSeconds) * 1000,
    pollIntervalMs: read(v.pollMs),
    gapWaitMs: read(v.gapWaitMs),
    reauthIntervalMs: read(v.reauthSeconds) * 1000,
  },
}));
