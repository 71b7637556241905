// Outbound webhooks: each user's signing secret, and enqueueing deliveries
// inside the transaction of the change they report (so a committed change is
// always delivered and a rolled-back one never is). The worker sends them.
import type { Kysely } from 'kysely';
import type { WebhookConfig } from '../../config.js';
import { Batcher } from '../../db/batcher.js';
import type { Database } from '../../db/schema.js';
import { invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { generateWebhookSecret } from '../../lib/standard-webhooks.js';
import { iso } from '../../lib/time.js';
import { isPublicAddress } from '../../lib/outbound-http.js';
import { WebhookStore } from './store.js';
import type { WebhookSecretsTable } from './tables.js';

/** After a rotation the previous secret keeps signing (beside the new one) this long. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600_000;

export interface WebhookSecretView {
  secret: string;
  createdAt: string;
  /** Until when deliveries also carry a signature made with the previous secret (after a rotation). */
  previousSecretValidUntil: string | null;
}

/** One delivery as its owner sees it (GET /api/webhooks/deliveries). */
export interface DeliveryView {
  id: string;
  url: string;
  type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  /** pending: when the next attempt is due. */
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewDelivery {
  userId: string;
  url: string;
  /** The message's `type` (e.g. `call_status`). */
  type: string;
  /** The message's `data`: the same payload as the event of that type. */
  data: Record<string, unknown>;
}

export class WebhookService {
  /** The delivery worker's secret reads of one event-loop turn, in one query (a burst of deliveries reads many). */
  private readonly secretReads: Batcher<string, WebhookSecretsTable | undefined>;

  constructor(
    private readonly store: WebhookStore,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
    private readonly config: WebhookConfig,
  ) {
    this.secretReads = new Batcher(async (userIds) => {
      const byUser = new Map((await this.store.findSecrets([...new Set(userIds)])).map((row) => [row.user_id, row]));
      return userIds.map((userId) => ({ ok: true as const, value: byUser.get(userId) }));
    });
  }

  private listeners = new Set<() => void>();

  /** The user's signing secret, created on first use. */
  /** Makes sure the user has a secret before the first delivery is signed (reads of one turn share one query). */
  async ensureSecret(userId: string): Promise<void> {
    if (await this.secretReads.run(userId)) return;
    await this.getSecret(userId);
  }

  async getSecret(userId: string): Promise<WebhookSecretView> {
    let row = await this.store.findSecret(userId);
    if (!row) {
      await this.store.insertSecretIfMissing({
        user_id: userId,
        secret: this.secretBox.seal(generateWebhookSecret()),
        previous_secret: null,
        rotated_at: null,
        created_at: this.clock.now(),
      });
      row = await this.store.findSecret(userId);
      if (!row) throw new Error('webhook secret vanished after creation');
    }
    const graceEnd = row.rotated_at !== null ? Number(row.rotated_at) + PREVIOUS_SECRET_GRACE_MS : null;
    return {
      secret: this.secretBox.openText(row.secret),
      createdAt: iso(Number(row.rotated_at ?? row.created_at)),
      previousSecretValidUntil: graceEnd !== null && graceEnd > this.clock.now() ? iso(graceEnd) : null,
    };
  }

  /**
   * A new secret; the previous one keeps signing deliveries beside it for
   * PREVIOUS_SECRET_GRACE_MS so receivers can switch without losing any.
   * Two rotations at once: one wins and both answer its secret.
   */
  async rotateSecret(userId: string): Promise<WebhookSecretView> {
    const current = await this.store.findSecret(userId);
    if (!current) return this.getSecret(userId);
    await this.store.rotateSecret(
      userId,
      current.secret,
      this.secretBox.seal(generateWebhookSecret()),
      this.clock.now(),
    );
    return this.getSecret(userId);
  }

  /** The secrets a delivery is signed with now: the current one, then the previous one during its grace period. */
  async signingSecrets(userId: string): Promise<string[]> {
    const row = await this.secretReads.run(userId);
    if (!row) return [];
    const secrets = [this.secretBox.openText(row.secret)];
    if (
      row.previous_secret &&
      row.rotated_at !== null &&
      Number(row.rotated_at) + PREVIOUS_SECRET_GRACE_MS > this.clock.now()
    ) {
      secrets.push(this.secretBox.openText(row.previous_secret));
    }
    return secrets;
  }

  /**
   * Refuses a webhook URL that can never be delivered: not http(s), with
   * credentials, too long, or (in production, unless WEBHOOK_ALLOW_PRIVATE)
   * a literal private address. Names are checked again at each attempt.
   */
  checkUrl(url: string): string {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw invalidInput('webhook must be an absolute http(s) URL');
    }
    if (!['http:', 'https:'].includes(parsed.protocol)) throw invalidInput('webhook must be an http(s) URL');
    if (parsed.username || parsed.password) throw invalidInput('webhook must not carry credentials');
    if (url.length > 2048) throw invalidInput('webhook URL is longer than 2048 characters');
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    if (
      !this.config.allowPrivate &&
      (host === 'localhost' || host.endsWith('.localhost') || (isIpLiteral(host) && !isPublicAddress(host)))
    ) {
      throw invalidInput('webhook must point at a public address');
    }
    return parsed.toString();
  }

  /**
   * Adds deliveries through `db` (the transaction of the change they report);
   * the message body is fixed now and sent as is on every attempt. Call
   * wake() after the commit.
   */
  async enqueue(db: Kysely<Database>, deliveries: NewDelivery[]): Promise<string[]> {
    const now = this.clock.now();
    const rows = deliveries.map((d) => ({
      id: `msg_${newId(now).replace(/-/g, '')}`,
      user_id: d.userId,
      url: d.url,
      event_type: d.type,
      body: JSON.stringify({ type: d.type, timestamp: iso(now), data: d.data }),
      status: 'pending' as const,
      attempts: 0,
      next_attempt_at: now,
      last_status_code: null,
      last_error: null,
      created_at: now,
      updated_at: now,
    }));
    await WebhookStore.insertDeliveries(db, rows);
    return rows.map((r) => r.id);
  }

  /** The user's most recent deliveries, newest first. */
  async listDeliveries(userId: string, limit: number): Promise<DeliveryView[]> {
    const rows = await this.store.listForUser(userId, limit);
    return rows.map((r) => ({
      id: r.id,
      url: r.url,
      type: r.event_type,
      status: r.status,
      attempts: Number(r.attempts),
      nextAttemptAt: r.status === 'pending' ? iso(Number(r.next_attempt_at)) : null,
      lastStatusCode: r.last_status_code,
      lastError: r.last_error,
      createdAt: iso(Number(r.created_at)),
      updatedAt: iso(Number(r.updated_at)),
    }));
  }

  /** Wakes this instance's worker (after the enqueueing transaction committed); other instances find the deliveries by polling. */
  wake(): void {
    for (const listener of this.listeners) listener();
  }

  onWake(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

const isIpLiteral = (host: string) => /^[\d.]+$/.test(host) || host.includes(':');
