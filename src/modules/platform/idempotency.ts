// Idempotency-Key rules (DESIGN "Idempotency", as Stripe does it): the first
// successful answer to (user, key) is kept for 24 h and replayed for retries;
// the same key with a different request is 422; a retry while the first is
// still running is 409. Error answers are not kept: nothing happened, so a
// corrected retry (a card added, a provider back up) runs again.
import { createHash } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { IdempotencyStore } from './idempotency-store.js';

export interface StoredAnswer {
  statusCode: number;
  contentType: string | null;
  body: string;
  /** The answer's headers that its route documents, replayed with it. */
  headers: Record<string, string>;
}

export type IdempotencyOutcome = { kind: 'run' } | ({ kind: 'replay' } & StoredAnswer);

export interface IdempotencyOptions {
  /** How long an answer is replayed. */
  ttlMs: number;
  /** A record still running after this is taken to be abandoned (its process died) and may be claimed again. */
  staleAfterMs: number;
}

export const defaultIdempotencyOptions: IdempotencyOptions = { ttlMs: 24 * 3600_000, staleAfterMs: 10 * 60_000 };

/** Printable ASCII without spaces, 1–255 characters (Stripe's limit). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';

export class IdempotencyService {
  constructor(
    private readonly store: IdempotencyStore,
    private readonly clock: Clock,
    private readonly options: IdempotencyOptions = defaultIdempotencyOptions,
  ) {}

  /** What identifies "the same request": method, URL with its query, and the body with keys sorted. */
  fingerprint(method: string, url: string, body: unknown): string {
    return createHash('sha256')
      .update(`${method}\n${url}\n${canonicalJson(body ?? null)}`)
      .digest('hex');
  }

  /** Claims the key for this request, or answers with the stored result; throws 422 / 409 as described above. */
  async begin(userId: string, key: string, fingerprint: string): Promise<IdempotencyOutcome> {
    // A record can vanish between the failed claim and the read (released by a failed first request): claim again.
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = this.clock.now();
      const claimed = await this.store.claim({
        userId,
        key,
        fingerprint,
        now,
        expiresAt: now + this.options.ttlMs,
        staleBefore: now - this.options.staleAfterMs,
      });
      if (claimed) return { kind: 'run' };
      const existing = await this.store.find(userId, key);
      if (!existing) continue;
      if (existing.fingerprint !== fingerprint) {
        throw new AppError(
          'idempotency_mismatch',
          'this Idempotency-Key was already used with a different request; use a new key for a new request',
        );
      }
      if (existing.state === 'running' || existing.status_code === null) {
        throw new AppError(
          'idempotency_in_progress',
          'a request with this Idempotency-Key is still being processed; retry shortly',
          undefined,
          { 'retry-after': '1' },
        );
      }
      return {
        kind: 'replay',
        statusCode: existing.status_code,
        contentType: existing.content_type,
        body: existing.body ?? '',
        headers: parseHeaders(existing.headers),
      };
    }
    throw new AppError(
      'idempotency_in_progress',
      'a request with this Idempotency-Key is changing state; retry shortly',
      undefined,
      { 'retry-after': '1' },
    );
  }

  /** Keeps a successful answer for replay; an error answer releases the key instead. */
  async finish(userId: string, key: string, answer: StoredAnswer): Promise<void> {
    if (answer.statusCode >= 200 && answer.statusCode < 400) await this.store.complete(userId, key, answer);
    else await this.store.release(userId, key);
  }

  /** Releases the key without an answer (the answer could not be stored, e.g. a stream). */
  release(userId: string, key: string): Promise<void> {
    return this.store.release(userId, key);
  }

  purgeExpired(now: number): Promise<void> {
    return this.store.deleteExpired(now);
  }
}

/** JSON with object keys sorted, so {a,b} and {b,a} are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function parseHeaders(stored: string | null | undefined): Record<string, string> {
  if (!stored) return {};
  const parsed = JSON.parse(stored) as unknown;
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
}
