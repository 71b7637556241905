// Account emails (reset links, sign-up notices) are sent without making the
// request wait: how long an email takes must not tell a caller whether an
// account exists. The sends still in flight are awaited on shutdown (drain).
import type { EmailMessage, EmailProvider } from '../../providers/email/interface.js';

export class BackgroundMail {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly email: EmailProvider) {}

  /**
   * Starts `work` (which usually ends in send()) and returns at once. The
   * promise settles when it is done or failed, for the caller to log.
   */
  run(work: () => Promise<void>): Promise<void> {
    const done = Promise.resolve().then(work);
    const tracked = done.catch(() => undefined);
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    return done;
  }

  async send(message: EmailMessage): Promise<void> {
    await this.email.send(message);
  }

  /** Waits for every email still being sent (graceful shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }
}
