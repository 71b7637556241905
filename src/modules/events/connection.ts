// One open event stream. It subscribes BEFORE it replays, holds live events
// while replaying, and drops every id it has already passed (a user's events
// reach it in increasing id order), so nothing is missed or sent twice across
// the replay/live boundary.
//
// Memory stays bounded however slow the client: live frames are queued only
// while the socket's backlog is under maxBufferedBytes. Past it, the stream
// stops queueing and "catches up": once the client has read the backlog it
// pages the missed events from the log (paced by the socket), then goes live
// again. A client that does not drain within slowClientTimeoutMs is ended; it
// resumes with Last-Event-ID. A burst to a fast client costs a short replay,
// never a disconnect.
import type { EventSubscriber } from './broker.js';
import { type EventSelection, matchesPayload, matchesType } from './selection.js';
import type { EventStore } from './store.js';
import { StreamEvent } from './stream-event.js';

/** Where frames go: the HTTP response, seen without Fastify or node:http. */
export interface StreamSink {
  /** Queues text; false when the transport would like us to wait for drain. */
  write(chunk: string | Buffer): boolean;
  /** Bytes queued and not yet handed to the network. */
  readonly bufferedBytes: number;
  readonly closed: boolean;
  /** Resolves true on drain; false on close or after timeoutMs. */
  waitForDrain(timeoutMs: number): Promise<boolean>;
  /** graceful: flush and end; otherwise drop the connection and what it still holds. */
  end(graceful: boolean): void;
  onClose(listener: () => void): void;
}

export interface ConnectionOptions {
  keepAliveMs: number;
  maxBufferedBytes: number;
  slowClientTimeoutMs: number;
  reauthIntervalMs: number;
  /** The `retry:` hint sent first: how long a client waits before reconnecting. */
  retryMs: number;
  replayBatch: number;
  /** Live events held while catching up; past it they are dropped and read from the log instead. */
  maxHeldEvents: number;
}

export type CloseReason = 'client' | 'slow' | 'shutdown' | 'unauthorized' | 'error';

export class EventConnection implements EventSubscriber {
  private state: 'opened' | 'catching-up' | 'live' | 'closed' = 'opened';
  /** Everything of this user up to this id is handled (sent, or filtered out). */
  private lastId: number;
  private held: StreamEvent[] = [];
  private heldOverflowed = false;
  private sink: StreamSink | null = null;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: () => void = () => {};
  private readonly closeListeners: Array<(reason: CloseReason) => void> = [];

  constructor(
    readonly userId: string,
    private readonly selection: EventSelection,
    /** Send events after this id. */
    startAfter: number,
    private readonly store: EventStore,
    private readonly options: ConnectionOptions,
    /** Re-checks the caller's credential; false ends the stream. */
    private readonly stillAuthorized: () => Promise<boolean>,
  ) {
    this.lastId = startAfter;
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  /** Called once, by the service, with the broker's unsubscribe. */
  bindSubscription(unsubscribe: () => void): void {
    this.unsubscribe = unsubscribe;
  }

  onClose(listener: (reason: CloseReason) => void): void {
    this.closeListeners.push(listener);
  }

  accepts(event: StreamEvent): boolean {
    return matchesType(this.selection, event.type) && matchesPayload(this.selection, event);
  }

  deliver(event: StreamEvent): void {
    if (this.state === 'live') this.send(event);
    else if (this.state !== 'closed') this.hold(event);
  }

  /** Starts writing to the client: preamble, replay after the start id, then live events. */
  async attach(sink: StreamSink): Promise<void> {
    if (this.state !== 'opened') return;
    this.sink = sink;
    sink.onClose(() => this.close('client'));
    if (sink.closed) return this.close('client');
    sink.write(`retry: ${this.options.retryMs}\n: connected\n\n`);
    this.timers.push(setInterval(() => this.keepAlive(), this.options.keepAliveMs));
    this.timers.push(setInterval(() => void this.reauthorize(), this.options.reauthIntervalMs));
    for (const timer of this.timers) timer.unref();
    await this.catchUp();
  }

  close(reason: CloseReason): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.unsubscribe();
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.held = [];
    // A slow client's queued bytes go with its socket; it resumes with Last-Event-ID.
    this.sink?.end(reason !== 'slow' && reason !== 'error');
    for (const listener of this.closeListeners) listener(reason);
  }

  private hold(event: StreamEvent): void {
    if (this.held.length < this.options.maxHeldEvents) {
      this.held.push(event);
      return;
    }
    // Too many to hold: forget them; the replay reads them from the log.
    this.held = [];
    this.heldOverflowed = true;
  }

  private send(event: StreamEvent): void {
    if (event.id <= this.lastId) return; // already sent by a replay (or filtered out there)
    if (this.sink!.bufferedBytes > this.options.maxBufferedBytes) {
      // The client is behind: stop queueing; this event and later ones come from the log once it has read.
      void this.catchUp();
      return;
    }
    this.lastId = event.id;
    this.sink!.write(event.frame);
  }

  /** Waits out the backlog, replays from lastId, then goes live with the held events. */
  private async catchUp(): Promise<void> {
    if (this.state === 'closed' || this.state === 'catching-up') return;
    this.state = 'catching-up';
    this.held = [];
    this.heldOverflowed = false;
    try {
      for (;;) {
        if (this.sink!.bufferedBytes > this.options.maxBufferedBytes && !(await this.drained())) return;
        if (!(await this.replay())) return;
        if (this.sink!.bufferedBytes > this.options.maxBufferedBytes) continue;
        const held = this.held;
        this.held = [];
        this.state = 'live';
        for (const event of held) {
          this.send(event);
          if (this.state !== 'live') return; // fell behind again: a new catch-up has started
        }
        return;
      }
    } catch {
      this.close('error');
    }
  }

  /** Pages through the log after lastId, paced by the socket; false when the stream ended meanwhile. */
  private async replay(): Promise<boolean> {
    do {
      this.heldOverflowed = false;
      for (;;) {
        const rows = await this.store.listForUser(this.userId, this.lastId, this.selection.types, this.options.replayBatch);
        if (this.state !== 'catching-up') return false;
        for (const row of rows) {
          const event = new StreamEvent(row);
          if (event.id <= this.lastId) continue;
          this.lastId = event.id;
          if (!matchesPayload(this.selection, event)) continue;
          if (!this.sink!.write(event.frame) && !(await this.drained())) return false;
        }
        if (rows.length < this.options.replayBatch) break;
      }
    } while (this.heldOverflowed);
    return true;
  }

  /** Waits for the client to read what is queued; ends the stream as slow when it does not in time. */
  private async drained(): Promise<boolean> {
    const ok = await this.sink!.waitForDrain(this.options.slowClientTimeoutMs);
    if (this.state !== 'catching-up') return false;
    if (!ok) this.close(this.sink!.closed ? 'client' : 'slow');
    return ok;
  }

  private keepAlive(): void {
    if (this.state === 'closed' || this.sink!.bufferedBytes > 0) return; // a backlog is proof enough of life
    this.sink!.write(': keep-alive\n\n');
  }

  private async reauthorize(): Promise<void> {
    let ok: boolean;
    try {
      ok = await this.stillAuthorized();
    } catch {
      return; // a database hiccup is not a revocation; try again next time
    }
    if (!ok) this.close('unauthorized');
  }
}
