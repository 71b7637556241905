// This instance's confirmation of the calls it carries (and of the calls its
// in-process sandbox carrier holds before their stream connects): one timer
// for all, started by the first such call, stopped when the app closes. A
// minute without it and another instance ends those calls `instance_stopped`.
import { FINAL_STATUSES } from '../../providers/audio/interface.js';
import type { Clock } from '../../lib/clock.js';
import type { CallStore } from '../calls/store.js';
import type { LiveCalls } from './live-calls.js';

/** How often this instance confirms the calls it carries (a minute without it and they end `instance_stopped`). */
export const MEDIA_HEARTBEAT_MS = 15_000;

export class MediaHeartbeat {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: {
      /** This process, as it marks the calls it carries. */
      instanceId: string;
      store: Pick<CallStore, 'heartbeat'>;
      live: Pick<LiveCalls, 'ids'>;
      clock: Clock;
      log: { warn(obj: unknown, msg: string): void };
    },
  ) {}

  get instanceId(): string {
    return this.deps.instanceId;
  }

  /** Starts the one timer (again a no-op while it runs). */
  keep(): void {
    if (this.timer) return;
    const { instanceId, store, live, clock, log } = this.deps;
    this.timer = setInterval(() => {
      store
        .heartbeat(instanceId, live.ids(), FINAL_STATUSES, clock.now())
        .catch((err: unknown) => log.warn({ err }, 'media heartbeat not written'));
    }, MEDIA_HEARTBEAT_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
