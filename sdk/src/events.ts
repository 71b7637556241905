// Event subscriptions over server-sent events (GET /api/events/{type}). The
// subscription reconnects after a dropped connection or a server restart and
// resumes from the last event it delivered (Last-Event-ID), so nothing is
// missed or delivered twice. Use it as an async iterator or with onEvent.
import { type HttpCore, WorkspaceApiError, errorFromResponse } from './http.js';
import { type SseFrame, SseParser } from './sse.js';

export interface WorkspaceEvent<T = Record<string, unknown>> {
  /** The event log id (increasing); resume points are made of it. */
  id: string;
  /** The SSE event name, e.g. object_created. */
  type: string;
  /** The JSON payload (spec section 6). */
  data: T;
}

export interface SubscribeOptions<T> {
  /** Payload field filters forwarded as query parameters, e.g. { related_object_id: storeId }; `*` wildcards allowed. */
  filter?: Record<string, string>;
  /** Resume after this event id (events after it are replayed first). */
  lastEventId?: string;
  /**
   * First reconnection delay in ms; doubles per failed attempt up to maxRetryMs.
   * When not set, the server's `retry:` hint is used (1000 until it sends one).
   */
  retryMs?: number;
  /** Upper bound of the reconnection delay (default 30000). */
  maxRetryMs?: number;
  /** Called for every event, in order, as well as (not instead of) the async iterator. */
  onEvent?: (event: WorkspaceEvent<T>) => void;
  /** Called for a transient failure before each reconnection attempt. */
  onError?: (error: unknown) => void;
  /** Closing this signal closes the subscription. */
  signal?: AbortSignal;
  /**
   * Open each connection with a one-time ticket (POST /api/events/ticket)
   * instead of sending the credential on the stream request, with the resume
   * point in the URL: the stream request is then a simple cross-origin GET (no
   * preflight, no credential on a long-lived request). Default: true in
   * browsers, false elsewhere.
   */
  ticket?: boolean;
}

const inBrowser = () => typeof (globalThis as { document?: unknown }).document !== 'undefined';

/** Answers that reconnecting cannot fix: the subscription ends with the error. */
const FATAL_STATUSES = new Set([400, 401, 403, 404, 405, 410]);

type Waiter<T> = { resolve: (r: IteratorResult<WorkspaceEvent<T>>) => void; reject: (e: unknown) => void };

export class EventSubscription<T = Record<string, unknown>> implements AsyncIterable<WorkspaceEvent<T>> {
  /** Resolves once the first connection is open (events from then on are delivered); rejects if it never opens. */
  readonly ready: Promise<void>;
  private opened = 0;
  private readonly parser: SseParser;
  private readonly queue: WorkspaceEvent<T>[] = [];
  private readonly waiters: Waiter<T>[] = [];
  private closed = false;
  private reconnecting = false;
  private failure: unknown = null;
  private connection: AbortController | null = null;
  private wakeSleeper: (() => void) | null = null;
  private baseDelay: number;
  private readonly maxDelay: number;
  private resolveReady!: () => void;
  private rejectReady!: (e: unknown) => void;
  private readonly done: Promise<void>;

  constructor(
    private readonly http: HttpCore,
    private readonly url: string,
    private readonly options: SubscribeOptions<T> = {},
  ) {
    this.baseDelay = options.retryMs ?? 1000;
    this.maxDelay = options.maxRetryMs ?? 30_000;
    this.parser = new SseParser(
      {
        onFrame: (frame) => this.deliver(frame),
        onRetry: (ms) => {
          if (options.retryMs === undefined) this.baseDelay = ms;
        },
      },
      options.lastEventId ?? '',
    );
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // observed through next() too
    options.signal?.addEventListener('abort', () => this.close(), { once: true });
    this.done = this.run();
  }

  /** How many times a connection has been opened (1 until the first reconnection). */
  get connections(): number {
    return this.opened;
  }

  /** The id of the last event delivered: pass it as lastEventId to resume elsewhere. */
  get lastEventId(): string {
    return this.parser.lastEventId;
  }

  /** Ends the subscription: the connection is aborted and the iterator finishes. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.connection?.abort();
      this.wakeSleeper?.();
      this.rejectReady(new Error('subscription closed before it opened'));
      for (const waiter of this.waiters.splice(0)) waiter.resolve({ value: undefined, done: true });
    }
    await this.done;
  }

  /**
   * Drops the current connection as a network failure would; the subscription
   * reconnects and resumes from lastEventId (useful after a network change).
   */
  reconnect(): void {
    this.reconnecting = true;
    this.connection?.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<WorkspaceEvent<T>> {
    return {
      next: () => {
        const value = this.queue.shift();
        if (value) return Promise.resolve({ value, done: false });
        if (this.failure) return Promise.reject(this.failure);
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
      },
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  private deliver(frame: SseFrame): void {
    if (this.closed) return;
    let data: T;
    try {
      data = JSON.parse(frame.data) as T;
    } catch {
      data = frame.data as T;
    }
    const event: WorkspaceEvent<T> = { id: frame.id, type: frame.event, data };
    this.options.onEvent?.(event);
    const waiter = this.waiters.shift();
    if (waiter) waiter.resolve({ value: event, done: false });
    else this.queue.push(event);
  }

  private fail(error: unknown): void {
    this.failure = error;
    this.closed = true;
    this.rejectReady(error);
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.closed) {
      const connection = new AbortController();
      this.connection = connection;
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream' };
        let url = this.url;
        if (this.options.ticket ?? inBrowser()) {
          const { ticket } = await this.http.request('post', '/api/events/ticket', { signal: connection.signal });
          const query = new URLSearchParams({ ticket });
          if (this.parser.lastEventId) query.set('lastEventId', this.parser.lastEventId);
          url = `${url}${url.includes('?') ? '&' : '?'}${query}`;
        } else if (this.parser.lastEventId) {
          headers['last-event-id'] = this.parser.lastEventId;
        }
        const response = await this.http.send(url, {
          method: 'GET',
          headers,
          signal: connection.signal,
          credential: !(this.options.ticket ?? inBrowser()),
        });
        if (!response.ok) {
          const error = await errorFromResponse(response);
          if (FATAL_STATUSES.has(response.status)) return this.fail(error);
          throw error;
        }
        if (!response.body) return this.fail(new Error('the event stream answered without a body'));
        this.opened += 1;
        attempt = 0;
        this.resolveReady();
        await this.read(response.body);
        if (!this.closed) throw new Error('the event stream ended');
      } catch (error) {
        if (this.closed) break;
        // The ticket request's answer: as final as the stream's own.
        if (error instanceof WorkspaceApiError && FATAL_STATUSES.has(error.status)) return this.fail(error);
        if (!this.reconnecting) this.options.onError?.(error);
      } finally {
        // A frame cut off by the drop is sent again after resume.
        this.parser.reset();
      }
      if (this.closed) break;
      // A deliberate reconnect() comes back at once; failures back off.
      const delay = this.reconnecting ? 0 : Math.min(this.maxDelay, this.baseDelay * 2 ** attempt);
      if (!this.reconnecting) attempt += 1;
      this.reconnecting = false;
      await this.sleep(delay);
    }
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      reader.releaseLock();
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeSleeper = done;
    });
  }
}
