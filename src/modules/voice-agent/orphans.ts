// Calls nobody carries any more (DESIGN.md "Voice agent"): those of an
// instance that stopped confirming them, and sessions whose media stream never
// connected although its token expired. Every instance looks at start and
// every 30 s; the report ids are fixed per session, so two instances doing it
// at once end a call once.
import { FINAL_STATUSES, type ProgressReporter } from '../../providers/audio/interface.js';
import type { Clock } from '../../lib/clock.js';
import { iso } from '../../lib/time.js';
import type { CallStore } from '../calls/store.js';
import type { MediaHeartbeat } from './heartbeat.js';
import { MEDIA_STALE_MS } from './twilio-callbacks.js';

/** A session whose media stream has not connected this long after its token expired is ended. */
export const MEDIA_CONNECT_GRACE_MS = 10_000;

type Log = { warn(obj: unknown, msg: string): void };

/** What an orphaned call is charged for: the carrier's duration when it told us, else answered → last heartbeat. */
function orphanSeconds(session: {
  answered_at?: number | null;
  media_heartbeat_at?: number | null;
  carrier_duration_seconds?: number | null;
}): number {
  if (session.carrier_duration_seconds !== null && session.carrier_duration_seconds !== undefined)
    return Number(session.carrier_duration_seconds);
  if (!session.answered_at || !session.media_heartbeat_at) return 0;
  return Math.max(0, Math.round((Number(session.media_heartbeat_at) - Number(session.answered_at)) / 1000));
}

export class OrphanedCalls {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      store: Pick<CallStore, 'listOrphaned' | 'listUnconnected' | 'setOutcome'>;
      heartbeat: MediaHeartbeat;
      report: ProgressReporter;
      clock: Clock;
    },
  ) {}

  /**
   * Ends as `failed` (outcome `instance_stopped`) the calls whose media
   * instance has stopped confirming them. The call is charged what the
   * carrier said it lasted when its `completed` came while the stream still
   * looked carried, else up to the instance's last heartbeat.
   */
  async failOrphaned(options: { exclusive?: boolean } = {}): Promise<number> {
    const { store, heartbeat, report, clock } = this.deps;
    const now = clock.now();
    // Exclusive (a SQLite server at start: it holds the data folder's lock): every other instance has stopped, however fresh its heartbeat.
    const orphans = await store.listOrphaned(
      FINAL_STATUSES,
      now - MEDIA_STALE_MS,
      100,
      options.exclusive ? heartbeat.instanceId : undefined,
    );
    for (const session of orphans) {
      await store.setOutcome(session.id, 'instance_stopped', 'instance_stopped');
      await report(session.id, `orphaned_${session.id}`, {
        status: 'failed',
        at: iso(now),
        outcome: 'instance_stopped',
        reason: 'instance_stopped',
        duration_seconds: orphanSeconds(session),
      });
    }
    return orphans.length;
  }

  /**
   * Ends the sessions whose media stream never connected although its token
   * expired (a carrier that never opened it, a duplicate webhook's session,
   * a browser that never came): their hold goes back and the concurrency
   * slot is free again, within a minute of the deadline.
   */
  async endUnconnected(): Promise<number> {
    const { store, report, clock } = this.deps;
    const now = clock.now();
    const waiting = await store.listUnconnected(FINAL_STATUSES, now - MEDIA_CONNECT_GRACE_MS, 100);
    for (const session of waiting) {
      // A web call: the same end (and report id) as its own timer's, so the two end it once.
      const web = session.direction === 'web';
      const outcome = web ? 'no_answer' : 'provider_error';
      const reason = web ? 'not_connected' : 'media_not_connected';
      await store.setOutcome(session.id, outcome, reason);
      await report(session.id, web ? `web_${session.id}_not_connected` : `unconnected_${session.id}`, {
        status: web ? 'canceled' : 'failed',
        at: iso(now),
        outcome,
        reason,
      });
    }
    return waiting.length;
  }

  /**
   * Looks for calls of stopped instances, and sessions whose stream never
   * came, now and every `intervalMs`. `exclusive`: no other instance can be
   * running (SQLite), so at start every call of another is ended at once.
   */
  watch(intervalMs: number, log: Log, options: { exclusive?: boolean } = {}): void {
    const run = (first = false) => {
      void this.failOrphaned({ exclusive: first && options.exclusive })
        .then(() => this.endUnconnected())
        .catch((err: unknown) =>
          log.warn({ err }, 'ending calls of stopped instances, or whose media never connected, failed'),
        );
    };
    this.deps.heartbeat.keep();
    run(true);
    this.timer = setInterval(run, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
