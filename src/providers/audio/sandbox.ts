// The in-process audio server: plays each call through queued → ringing →
// in_progress → completed over a few seconds, with a short transcript, and
// reports every step as a signed Standard Webhooks message through the same
// verification and handling as the real audio server's reports. A number
// ending in 0000 is not answered (ringing → no_answer) and one ending in 0002
// is busy, so those paths can be tried too. Calls under way are lost when the process stops.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import { signWebhook } from '../../lib/standard-webhooks.js';
import type { AssembledCall, AudioProgress, AudioProvider, ProgressSink } from './interface.js';

export class SandboxAudioProvider implements AudioProvider {
  readonly name = 'sandbox';
  readonly sandbox = true;
  private sink: ProgressSink | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    /** The secret the service verifies audio reports with. */
    private readonly secret: string,
    private readonly stepMs: number,
    private readonly clock: Clock,
  ) {}

  private log: { error(obj: unknown, msg: string): void } | null = null;

  /** Where a report the service failed to handle is logged (the call then stops where it was). */
  reportErrorsTo(log: { error(obj: unknown, msg: string): void }): void {
    this.log = log;
  }

  /** Where reports go: the calls service's handler of POST /api/webhooks/audio/{sessionId}. */
  connect(sink: ProgressSink): void {
    this.sink = sink;
  }

  async startCall(sessionId: string, call: AssembledCall): Promise<{ providerCallId: string }> {
    if (!this.sink) throw new Error('sandbox audio server is not connected to the calls service');
    const unanswered = /0000$/.test(call.to);
    const steps: Array<[number, () => AudioProgress]> = [
      [0, () => this.progress('queued')],
      [1, () => this.progress('ringing')],
    ];
    if (unanswered) {
      steps.push([3, () => this.progress('no_answer')]);
    } else if (/0002$/.test(call.to)) {
      // DESIGN.md "Campaigns": a number ending in 0002 is busy.
      steps.push([2, () => this.progress('busy')]);
    } else {
      let answeredAt = 0;
      steps.push([2, () => ((answeredAt = this.clock.now()), this.progress('in_progress'))]);
      steps.push([
        4,
        () => ({
          ...this.progress('completed'),
          duration_seconds: Math.max(1, Math.round((this.clock.now() - answeredAt) / 1000)),
          transcript: [
            { role: 'agent' as const, text: call.firstMessage },
            { role: 'contact' as const, text: `Hi, this is ${call.contact.name}. Yes, now is a good time.` },
          ],
        }),
      ]);
    }
    void this.play(sessionId, steps);
    return { providerCallId: `sandbox_${randomUUID()}` };
  }

  /** Stops every call under way (the app is closing). */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private progress(status: AudioProgress['status']): AudioProgress {
    return { status, at: new Date(this.clock.now()).toISOString() };
  }

  /** Reports each step in order, the next only after the previous was handled. */
  private async play(sessionId: string, steps: Array<[number, () => AudioProgress]>): Promise<void> {
    let at = 0;
    for (const [step, build] of steps) {
      await this.sleep((step - at) * this.stepMs);
      at = step;
      if (this.closed) return;
      const body = Buffer.from(JSON.stringify(build()));
      const headers = signWebhook([this.secret], `evt_${randomUUID()}`, this.clock.now(), body);
      try {
        await this.sink!(sessionId, body, { ...headers });
      } catch (err) {
        this.log?.error({ err, sessionId }, 'sandbox audio server: the service refused a progress report');
        return;
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }
}
