// Where an event's time goes inside the server in the in-process fan-out bench
// (bench/fanout-cpu.ts --stages): from the writer's stamp (taken before the
// transaction) to the commit, to the broker handing it to the live feed, to the
// feed's flush starting, to each member's write (sampled) and the flush's end.
// It wraps the classes' prototypes from outside (the server runs in this
// process), so src/ carries no tracing. All times are CLOCK_MONOTONIC, the
// clients' clock too, so the client's receipt histogram compares directly.
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { EventConnection } from '../../src/modules/events/connection.js';
import { LiveFeed, type RoundFrames, WriteScheduler } from '../../src/modules/events/delivery.js';
import type { StreamEvent } from '../../src/modules/events/stream-event.js';
import { type Histogram, count, newHistogram, percentileMs, record } from './histogram.js';

export interface Stages {
  start(): void;
  /** The writer's transaction for the event with this content committed. */
  committed(content: string): void;
  report(): Record<string, unknown>;
}

const nowNs = () => Number(process.hrtime.bigint());
/** The stamp fanout-cpu.ts puts in the content: magic (8 hex), 8 unused, the send time (ns) as 16 hex digits. */
const stampOf = (content: string) => parseInt(content.slice(16, 32), 16);

/** One member in this many has its writes' times recorded (every member would cost the server 500,000 records a second). */
const SAMPLE_EVERY = 25;

export function instrumentStages(): Stages {
  let active = false;
  const h = {
    commit: newHistogram(),
    broker: newHistogram(),
    flushStart: newHistogram(),
    memberWrite: newHistogram(),
    flushEnd: newHistogram(),
    /** Per event: from the broker's hand-over to the flush that takes it (the window's wait). */
    waitInFeed: newHistogram(),
    /** Per round: from its start to its last member's write, and events per round. */
    roundMs: newHistogram(),
    roundEvents: newHistogram(),
    roundSlices: newHistogram(),
    /** The scheduler's window at the start of each pass (µs). */
    window: newHistogram(),
  };
  /** Each round: start and end (ms after start()), events, slices. */
  const timeline: Array<[number, number, number, number]> = [];
  let startedNs = 0;
  const counters = {
    rounds: 0,
    memberFlushes: 0,
    memberLeftBehind: 0,
    writesLeftBuffered: 0,
    catchUps: 0,
    gcMs: 0,
    gcCount: 0,
  };
  const stamps = new WeakMap<StreamEvent, number>();
  const delivered = new Map<number, number>();
  const stampOfEvent = (event: StreamEvent) => {
    let stamp = stamps.get(event);
    if (stamp === undefined) stamps.set(event, (stamp = stampOf(String(event.payload.content ?? ''))));
    return stamp;
  };
  const us = (ns: number) => ns / 1000;

  const feedProto = LiveFeed.prototype as unknown as {
    deliver(event: StreamEvent): void;
    flush(now: number, until: number): boolean;
  };
  const deliver = feedProto.deliver;
  feedProto.deliver = function (this: LiveFeed, event: StreamEvent) {
    if (active && !delivered.has(event.id)) {
      const t = nowNs();
      delivered.set(event.id, t);
      record(h.broker, us(t - stampOfEvent(event)));
    }
    return deliver.call(this, event);
  };
  const rounds = new WeakMap<LiveFeed, { started: number; events: StreamEvent[]; slices: number }>();
  const flush = feedProto.flush;
  feedProto.flush = function (this: LiveFeed, now: number, until: number) {
    const self = this as unknown as { round: object | null; events: StreamEvent[] };
    if (active && !self.round && self.events.length) {
      const t = nowNs();
      rounds.set(this, { started: t, events: self.events, slices: 0 });
      for (const event of self.events) {
        record(h.flushStart, us(t - stampOfEvent(event)));
        const at = delivered.get(event.id);
        if (at !== undefined) record(h.waitInFeed, us(t - at));
      }
    }
    const done = flush.call(this, now, until);
    const round = rounds.get(this);
    if (round) {
      round.slices += 1;
      if (done) {
        const t = nowNs();
        rounds.delete(this);
        counters.rounds += 1;
        record(h.roundMs, us(t - round.started));
        record(h.roundEvents, round.events.length);
        record(h.roundSlices, round.slices);
        timeline.push([
          Math.round((round.started - startedNs) / 1e6),
          Math.round((t - startedNs) / 1e6),
          round.events.length,
          round.slices,
        ]);
        for (const event of round.events) {
          record(h.flushEnd, us(t - stampOfEvent(event)));
          delivered.delete(event.id);
        }
      }
    }
    return done;
  };

  const connProto = EventConnection.prototype as unknown as {
    flushFeed(round: RoundFrames, now: number): void;
    catchUp(): Promise<void>;
  };
  const flushFeed = connProto.flushFeed;
  const sampled = new WeakMap<EventConnection, boolean>();
  let members = 0;
  connProto.flushFeed = function (this: EventConnection, round, now) {
    const self = this as unknown as { state: string; lastId: number; sink: { bufferedBytes: number } | null };
    const before = self.lastId;
    flushFeed.call(this, round, now);
    if (!active) return;
    counters.memberFlushes += 1;
    if (self.state !== 'live') counters.memberLeftBehind += 1;
    else if (self.sink && self.sink.bufferedBytes > 0) counters.writesLeftBuffered += 1;
    let sample = sampled.get(this);
    if (sample === undefined) sampled.set(this, (sample = members++ % SAMPLE_EVERY === 0));
    if (sample) {
      const t = nowNs();
      // Only what this write carried: the events above the member's position before it (none when it fell behind).
      if (self.lastId > before)
        for (const event of round.events) if (event.id > before) record(h.memberWrite, us(t - stampOfEvent(event)));
    }
  };
  const catchUp = connProto.catchUp;
  connProto.catchUp = function (this: EventConnection) {
    if (active) counters.catchUps += 1;
    return catchUp.call(this);
  };

  const schedProto = WriteScheduler.prototype as unknown as { flush(): void };
  const schedFlush = schedProto.flush;
  schedProto.flush = function (this: WriteScheduler) {
    const self = this as unknown as { continuing: boolean; dirty: Set<unknown> };
    if (active && !self.continuing && self.dirty.size) record(h.window, this.windowMs * 1000);
    return schedFlush.call(this);
  };

  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  const gc = new PerformanceObserver((list) => {
    if (!active) return;
    for (const entry of list.getEntries()) {
      counters.gcMs += entry.duration;
      counters.gcCount += 1;
    }
  });
  gc.observe({ entryTypes: ['gc'] });

  const pct = (hist: Histogram) => ({
    n: count(hist),
    p50: percentileMs(hist, 50),
    p90: percentileMs(hist, 90),
    p99: percentileMs(hist, 99),
    max: percentileMs(hist, 100),
  });
  /** Histograms of plain counts (recorded as µs): percentiles back in the same unit. */
  const pctCount = (hist: Histogram) => {
    const p = pct(hist);
    const c = (v: number | null) => (v === null ? null : Math.round(v * 1000));
    return { n: p.n, p50: c(p.p50), p90: c(p.p90), p99: c(p.p99), max: c(p.max) };
  };

  return {
    start() {
      active = true;
      startedNs = nowNs();
      loopDelay.enable();
    },
    committed(content) {
      if (active) record(h.commit, us(nowNs() - stampOf(content)));
    },
    report() {
      active = false;
      loopDelay.disable();
      gc.disconnect();
      return {
        msFromStamp: {
          commit: pct(h.commit),
          broker: pct(h.broker),
          flushStart: pct(h.flushStart),
          memberWrite: pct(h.memberWrite),
          flushEnd: pct(h.flushEnd),
        },
        waitInFeedMs: pct(h.waitInFeed),
        roundMs: pct(h.roundMs),
        windowMs: pct(h.window),
        roundEvents: pctCount(h.roundEvents),
        roundSlices: pctCount(h.roundSlices),
        ...counters,
        gcMs: Math.round(counters.gcMs),
        timeline: timeline.length > 40 ? [...timeline.slice(0, 20), ...timeline.slice(-20)] : timeline,
        loopDelayMs: {
          p50: loopDelay.percentile(50) / 1e6,
          p99: loopDelay.percentile(99) / 1e6,
          max: loopDelay.max / 1e6,
        },
      };
    },
  };
}
