// Prometheus metrics of one app instance (prom-client, its own registry so
// several apps in one process — tests — do not share counters). Gauges read
// their value when scraped; counters and histograms are updated where the
// thing happens. Per request the cost is one counter increment and one
// histogram observe with three labels.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface MetricSources {
  /** Connections of the PostgreSQL pool by state; null on SQLite. */
  pool: (() => { total: number; idle: number; waiting: number }) | null;
  sseStreams: () => number;
  callsInProgress: () => number;
  webhookQueueDepth: () => Promise<number>;
  /** Media sockets whose token is not accepted yet (media-admission.ts). */
  mediaSocketsWaiting: () => number;
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly dbErrors = new Counter({
    name: 'db_errors_total',
    help: 'Database connection errors: connections that broke (server restart, network) and requests answered 503 because the database could not be reached',
    registers: [this.registry],
  });
  readonly webhookFailures = new Counter({
    name: 'webhook_failures_total',
    help: 'Webhook delivery attempts that failed (retried later or given up)',
    registers: [this.registry],
  });
  readonly ledgerWrites = new Counter({
    name: 'ledger_writes_total',
    help: 'Credit ledger writes (reservations, settlements, grants, purchases)',
    registers: [this.registry],
  });
  readonly voiceTurnLatency = new Histogram({
    name: 'voice_turn_latency_seconds',
    help: 'Voice agent turn latency by stage (as reported on transcript lines)',
    labelNames: ['stage'] as const,
    buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5],
    registers: [this.registry],
  });
  readonly voiceFrameLateness = new Histogram({
    name: 'voice_frame_lateness_seconds',
    help: 'Outgoing agent audio pacing: how late each 20 ms frame left against its slot (0 when on time)',
    buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25],
    registers: [this.registry],
  });

  readonly voiceRecognition = new Histogram({
    name: 'voice_recognition_seconds',
    help: "A per-utterance recogniser's own time: from the VAD's cut of an utterance to its final result",
    buckets: [0.025, 0.05, 0.075, 0.1, 0.125, 0.15, 0.175, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2, 5],
    registers: [this.registry],
  });

  readonly callerAudioDropped = new Counter({
    name: 'voice_caller_audio_dropped_seconds_total',
    help: 'Caller audio dropped because its far end sent it faster than real time (plus the allowance), counted as each call ends',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** Registers the gauges that read live state when scraped. */
  watch(sources: MetricSources): void {
    const pool = sources.pool;
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state (total, idle, waiting requests); absent on SQLite',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        if (!pool) return;
        const now = pool();
        this.set({ state: 'total' }, now.total);
        this.set({ state: 'idle' }, now.idle);
        this.set({ state: 'waiting' }, now.waiting);
      },
    });
    new Gauge({
      name: 'sse_streams_open',
      help: 'Event streams open on this instance',
      registers: [this.registry],
      collect() {
        this.set(sources.sseStreams());
      },
    });
    new Gauge({
      name: 'calls_in_progress',
      help: 'Voice calls running on this instance',
      registers: [this.registry],
      collect() {
        this.set(sources.callsInProgress());
      },
    });
    new Gauge({
      name: 'media_sockets_unauthenticated',
      help: 'Media WebSockets on this instance whose token is not accepted yet',
      registers: [this.registry],
      collect() {
        this.set(sources.mediaSocketsWaiting());
      },
    });
    new Gauge({
      name: 'webhook_queue_depth',
      help: 'Webhook deliveries waiting to be attempted (the whole database, not this instance)',
      registers: [this.registry],
      async collect() {
        // While the database is away the scrape still answers (with the last known depth): that is when it matters.
        try {
          this.set(await sources.webhookQueueDepth());
        } catch {
          // keeps the previous value; db_errors_total and the health check tell the story
        }
      },
    });
  }

  /** Records a voice turn's latency per stage, from a transcript line's `latency` (milliseconds). */
  observeVoiceLatency(latency: Record<string, number | undefined> | undefined): void {
    if (!latency) return;
    for (const [stage, ms] of Object.entries(latency)) {
      if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0)
        this.voiceTurnLatency.observe({ stage: stage.replace(/Ms$/, '') }, ms / 1000);
    }
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
