// Cross-instance wake-ups on PostgreSQL: after a commit that recorded events,
// NOTIFY carries the log's new highest id; every instance LISTENs on a
// dedicated connection, on the channel of its events table's schema, and
// wakes its broker. A notification is only a hint:
// the broker reads the log itself, and a slow poll covers lost notifications.
import type pg from 'pg';
import { loadPg } from '../../db/load-pg.js';

export interface ChannelHandlers {
  /** A notification arrived carrying this id (the log's end when it was sent). */
  onHint(id: number): void;
  /** The LISTEN connection is (re)established: notifications may have been missed. */
  onConnected(): void;
}

/** The broker's view of cross-instance signalling (null on SQLite, where one process is all there is). */
export interface EventChannel {
  listen(handlers: ChannelHandlers): Promise<void>;
  /** Tells every instance (this one too) that new events are committed. Never throws; coalesces bursts. */
  notify(): void;
  close(): Promise<void>;
}

/**
 * The channel of the events table the connection's search_path finds: instances of one deployment share it, and a
 * deployment in another schema of the same database (or a test in its own schema) neither wakes nor is woken by it.
 * A hash of the schema keeps the name within PostgreSQL's 63 bytes, whatever the schema is called.
 */
const CHANNEL_NAME = `'workspace_events_' || left(md5(c.relnamespace::regnamespace::text), 16)`;
const OF_EVENTS_TABLE = `from pg_class c where c.oid = 'events'::regclass`;

export interface PgChannelOptions {
  /** A fixed channel name; by default the events table's schema names it (CHANNEL_NAME). */
  channel: string | null;
  /**
   * Least time between two NOTIFYs of this instance. Under a write burst every
   * NOTIFY is a query and a commit of its own; spacing them trades a few ms of
   * cross-instance delay (this instance's own streams are woken at once) for
   * far fewer queries. The first NOTIFY after a quiet spell goes at once.
   */
  minNotifyIntervalMs: number;
  /** First reconnect delay; doubles up to maxReconnectDelayMs. */
  reconnectDelayMs: number;
  maxReconnectDelayMs: number;
  onError: (err: unknown) => void;
}

export class PgEventChannel implements EventChannel {
  private readonly options: PgChannelOptions;
  private client: pg.Client | null = null;
  private handlers: ChannelHandlers | null = null;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  /** An error was reported since the LISTEN connection was last up: an outage is logged once, not per retry. */
  private reported = false;
  private notifying: Promise<void> | null = null;
  private notifyAgain = false;
  private lastNotifyAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly pool: pg.Pool,
    options: Partial<PgChannelOptions> = {},
  ) {
    this.options = {
      channel: null,
      minNotifyIntervalMs: 5,
      reconnectDelayMs: 500,
      maxReconnectDelayMs: 30_000,
      onError: () => {},
      ...options,
    };
  }

  /** The server process id of the LISTEN connection while it is up (tests use it to cut the connection). */
  get listenerPid(): number | null {
    return this.client ? ((this.client as unknown as { processID?: number }).processID ?? null) : null;
  }

  async listen(handlers: ChannelHandlers): Promise<void> {
    this.handlers = handlers;
    await this.connect();
  }

  notify(): void {
    if (this.closed) return;
    if (this.notifying) {
      this.notifyAgain = true; // one more NOTIFY after this one, so the last commit's id is always sent
      return;
    }
    const wait = this.lastNotifyAt + this.options.minNotifyIntervalMs - performance.now();
    this.notifying = (wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)) : Promise.resolve())
      .then(() => {
        this.lastNotifyAt = performance.now();
        // Reads the end of the log when it runs, so commits made while it waited are covered too.
        const end = '(select coalesce(max(id), 0) from events)::text';
        if (this.options.channel !== null)
          return this.pool.query(`select pg_notify($1, ${end})`, [this.options.channel]);
        return this.pool.query(`select pg_notify(${CHANNEL_NAME}, ${end}) ${OF_EVENTS_TABLE}`);
      })
      .then(
        () => {},
        (err) => {
          if (!this.closed) this.options.onError(err);
        },
      )
      .finally(() => {
        this.notifying = null;
        if (this.notifyAgain) {
          this.notifyAgain = false;
          this.notify();
        }
      });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.notifying;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => {});
  }

  /** Opens the LISTEN connection; on failure, schedules a retry and returns (the poll keeps delivering meanwhile). */
  private async connect(): Promise<void> {
    if (this.closed) return;
    // Same server, credentials and search_path as the pool, but outside it: LISTEN holds its connection forever.
    const name = `${(this.pool.options as pg.PoolConfig).application_name ?? 'workspace-api'} events listener`.slice(
      0,
      63,
    );
    const client = new (loadPg().Client)({
      connectionTimeoutMillis: 5000,
      ...this.pool.options,
      application_name: name,
    } as pg.ClientConfig);
    let dropped = false;
    const onDrop = (err?: unknown) => {
      if (dropped) return;
      dropped = true;
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (err && !this.closed && !this.reported) {
        this.reported = true;
        this.options.onError(err);
      }
      this.scheduleReconnect();
    };
    client.on('error', onDrop);
    client.on('end', () => onDrop());
    let channel = this.options.channel;
    client.on('notification', (message) => {
      if (message.channel !== channel) return;
      const id = Number(message.payload);
      this.handlers?.onHint(Number.isFinite(id) ? id : Number.MAX_SAFE_INTEGER);
    });
    try {
      await client.connect();
      channel ??= (await client.query<{ name: string }>(`select ${CHANNEL_NAME} as name ${OF_EVENTS_TABLE}`)).rows[0]
        .name;
      await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (err) {
      onDrop(err);
      return;
    }
    if (this.closed || dropped) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.attempt = 0;
    this.reported = false;
    this.handlers?.onConnected();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = Math.min(this.options.maxReconnectDelayMs, this.options.reconnectDelayMs * 2 ** this.attempt);
    this.attempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.connect();
    }, delay);
    this.reconnectTimer.unref();
  }
}
