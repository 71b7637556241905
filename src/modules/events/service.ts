// Opens event streams: checks the request, applies the per-user cap, works out
// where the stream starts, and subscribes it to the broker. The route then
// hands it the HTTP response (attach) — this file never sees HTTP.
import type { EventStreamConfig } from '../../config.js';
import type { DatabaseHandle } from '../../db/database.js';
import { AppError, invalidInput } from '../../http/errors.js';
import { EventBroker } from './broker.js';
import { type DeliveryContext, EventConnection } from './connection.js';
import { BufferBudget, JoinCache, Slots, WriteScheduler } from './delivery.js';
import { PgEventChannel } from './pg-channel.js';
import { RecentEvents } from './recent.js';
import type { EventRecorder } from './recorder.js';
import { parseFilters, parseTypes } from './selection.js';
import { EventStore } from './store.js';
import { Frames } from './stream-event.js';

type ErrorReporter = (err: unknown, context: string) => void;

/** Log reads for streams catching up at once per instance (each holds a page of up to 200 rows until its socket took it). */
const LOG_READ_SLOTS = 8;

/**
 * The delivery side of events for one instance: store, broker (woken by the
 * recorder's announce(), and on PostgreSQL by NOTIFY from every instance) and
 * the stream service. Nothing runs until the first stream opens.
 */
export function createEventStreams(
  database: DatabaseHandle,
  recorder: EventRecorder,
  config: EventStreamConfig,
): EventStreamService {
  let report: ErrorReporter = () => {};
  const store = new EventStore(database.db, database.dialect);
  // The broker's tail reads have a connection of their own on PostgreSQL: in a burst of writes the
  // shared pool's queue is long, and every live stream waits on these reads.
  const tailStore = database.dialect === 'postgres' ? new EventStore(database.dedicated(1), database.dialect) : store;
  const channel = database.pgPool
    ? new PgEventChannel(database.pgPool, { onError: (err) => report(err, 'event LISTEN/NOTIFY') })
    : null;
  const recent = new RecentEvents(config.recentBytes);
  const scheduler = new WriteScheduler(config.coalesceMs);
  const broker = new EventBroker(tailStore, recorder, channel, {
    pollIntervalMs: config.pollIntervalMs,
    gapRetentionMs: config.gapWaitMs,
    recent,
    scheduler,
    onError: (err) => report(err, 'event broker'),
  });
  return new EventStreamService(store, broker, config, (reporter) => (report = reporter), { recent, scheduler });
}

export interface OpenStreamInput {
  userId: string;
  /** The path's {type}. */
  type: string;
  /** The query string: every parameter except lastEventId filters a payload field. */
  query: Record<string, unknown>;
  /** The Last-Event-ID header, else ?lastEventId=, else null. */
  lastEventId: string | null;
  stillAuthorized: () => Promise<boolean>;
}

export class EventStreamService {
  private readonly connections = new Set<EventConnection>();
  /** Shared by every stream of this instance. */
  readonly delivery: DeliveryContext;

  constructor(
    private readonly store: EventStore,
    readonly broker: EventBroker,
    private readonly config: EventStreamConfig,
    private readonly setReporter: (reporter: ErrorReporter) => void = () => {},
    /** The broker's: it adds every event it reads to `recent` and flushes `scheduler` after each batch. */
    shared: { recent: RecentEvents; scheduler: WriteScheduler },
  ) {
    this.delivery = {
      store,
      ...shared,
      budget: new BufferBudget(config.maxBufferedTotalBytes),
      logSlots: new Slots(LOG_READ_SLOTS),
      joins: new JoinCache(Frames.join),
      releasedUpTo: () => broker.releasedUpTo,
      options: {
        keepAliveMs: config.keepAliveMs,
        maxBufferedBytes: config.maxBufferedBytes,
        slowClientTimeoutMs: config.slowClientTimeoutMs,
        reauthIntervalMs: config.reauthIntervalMs,
        retryMs: 2000,
        replayBatch: 200,
        catchUpWriteBytes: 64 * 1024,
        pressureBytes: 64 * 1024,
      },
    };
  }

  /**
   * A subscribed stream, holding live events until attach(). Without a
   * Last-Event-ID it starts after the user's newest event (or the broker's
   * release point when that is lower), so an event committed after this call
   * is never missed.
   */
  async open(input: OpenStreamInput): Promise<EventConnection> {
    const types = parseTypes(input.type);
    const filters = parseFilters(input.query);
    const after = parseEventId(input.lastEventId);
    await this.broker.ready();
    // An id past the user's newest event cannot have come from their stream (the log was reset, or
    // it is made up): start at the present rather than stay silent until ids catch up with it.
    const newest = await this.store.latestIdForUser(input.userId);
    // Never past what the broker has released: a lower id may still commit, and it comes live (in order).
    const startAfter = Math.min(after ?? newest, newest, this.broker.releasedUpTo);
    // Checked and counted with no await in between, so a burst of connects cannot overshoot.
    const max = this.config.maxStreamsPerUser;
    if (this.broker.subscriberCount(input.userId) >= max) {
      throw new AppError('rate_limited', `at most ${max} event streams may be open at once per user: close one first`);
    }
    const connection = new EventConnection(
      input.userId,
      { types, filters },
      startAfter,
      this.delivery,
      input.stillAuthorized,
    );
    connection.bindSubscription(this.broker.subscribe(connection));
    this.connections.add(connection);
    connection.onClose(() => this.connections.delete(connection));
    return connection;
  }

  /** Where the broker and the LISTEN connection report failures they recover from (the app's logger). */
  reportErrorsTo(reporter: ErrorReporter): void {
    this.setReporter(reporter);
  }

  /** Open streams on this instance (for benchmarks and health). */
  get openCount(): number {
    return this.connections.size;
  }

  /** Ends every stream (graceful shutdown must not wait for clients that never hang up). */
  closeAll(): void {
    for (const connection of [...this.connections]) connection.close('shutdown');
  }

  /** Stops the broker after the streams are closed. */
  async stop(): Promise<void> {
    this.closeAll();
    await this.broker.stop();
  }
}

function parseEventId(raw: string | null): number | null {
  if (raw === null || raw.trim() === '') return null;
  const text = raw.trim();
  if (!/^\d{1,15}$/.test(text)) throw invalidInput('Last-Event-ID / lastEventId must be an event id (a whole number)');
  return Number(text);
}
