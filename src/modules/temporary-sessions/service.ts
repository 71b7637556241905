// Temporary test calls (spec 3.4, 4.14; DESIGN "Telephony";
// docs/decisions/temporary-sessions.md). PUT sends a 6-digit code by SMS and
// returns a signed key bound to the user, the phone, the call type and an
// HMAC of the code. POST checks the code (5 tries per key), spends the key
// once (the single-use ledger, so across instances too), leases one of the
// operator's temporary numbers and starts a one-off call of that type from
// it. When the call ends the number goes back to the pool and a summary is
// emailed.
import type { RateLimitRule, RateLimits } from '../../config.js';
import { AppError, invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { hmacHex, randomDigits, randomToken, safeEqual } from '../../lib/crypto.js';
import { iso } from '../../lib/time.js';
import type { EmailProvider } from '../../providers/email/interface.js';
import type { SmsProvider } from '../../providers/sms/interface.js';
import { normalizePhone } from '../auth/service.js';
import type { CallSessionService } from '../calls/session-service.js';
import type { CallService, CallStatusPayload } from '../calls/service.js';
import type { ServiceTokens, TokenRefusal } from '../data/service-tokens.js';
import type { RequestMeta } from '../platform/audit.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import type { CallType } from './call-types.js';
import type { TemporarySessionStore } from './store.js';
import type { TemporarySessionsTable } from './tables.js';

export const TEMPORARY_KEY_TTL_SECONDS = 10 * 60;
/** Tries (wrong or right) one key allows; after that it is dead. */
export const TEMPORARY_KEY_MAX_ATTEMPTS = 5;
const KEY_USE = 'temporary-session';
/** A lease lasts the call's longest duration plus this, so a call that never reports its end frees its number anyway. */
const LEASE_MARGIN_MS = 5 * 60_000;
/** Summaries of calls that ended more than this long ago are no longer sent by the backstop. */
const SUMMARY_BACKSTOP_MS = 24 * 3600_000;

export interface TemporarySessionDeps {
  types: CallType[];
  /** The operator's numbers temporary calls are placed from. */
  numbers: string[];
  tokens: ServiceTokens;
  singleUse: SingleUseTokens;
  store: TemporarySessionStore;
  sms: SmsProvider;
  email: EmailProvider;
  calls: CallService;
  sessions: CallSessionService;
  limiter: RateLimiter;
  rateLimits: Pick<
    RateLimits,
    'temporarySessionPerUser' | 'temporarySessionPerPhone' | 'temporarySessionPerIp' | 'temporarySubmitPerUser'
  >;
  clock: Clock;
  masterKey: Buffer;
  /** The account's first name: whom the agent greets. */
  firstName: (userId: string) => Promise<string | null>;
}

const REFUSALS: Record<TokenRefusal, string> = {
  malformed: 'it is not a key issued by PUT /api/session/temporary',
  foreign: 'it was not signed by this server',
  expired: 'it has expired (keys last 10 minutes)',
  invalid: 'its signature or claims are wrong',
  'wrong-use': 'it is not a temporary-session key',
  'other-user': 'it was issued to another account',
};
const badKey = (why: TokenRefusal | string) =>
  new AppError(
    'invalid_token',
    `the key is not valid: ${REFUSALS[why as TokenRefusal] ?? why}; request a new one with PUT /api/session/temporary`,
  );

export class TemporarySessionService {
  private readonly codeKey: string;
  private readonly byId: Map<string, CallType>;
  private readonly attemptRule: RateLimitRule = {
    limit: TEMPORARY_KEY_MAX_ATTEMPTS,
    windowMs: TEMPORARY_KEY_TTL_SECONDS * 1000 + 60_000,
  };

  constructor(private readonly deps: TemporarySessionDeps) {
    this.codeKey = hmacHex(deps.masterKey, 'workspace/temporary-session-codes/v1');
    this.byId = new Map(deps.types.map((t) => [t.id, t]));
    deps.calls.onFinished((session, final) => this.callFinished(session.id, final));
  }

  /** GET: what may be asked for. */
  types(): Array<Pick<CallType, 'id' | 'name' | 'description'>> {
    return this.deps.types.map(({ id, name, description }) => ({ id, name, description }));
  }

  /** PUT: sends a code to `phone` and returns the key the code goes with. */
  async request(
    userId: string,
    input: { phone: string; type: string },
    meta: RequestMeta,
  ): Promise<{ key: string; expiresAt: string }> {
    const { limiter, rateLimits, sms, tokens } = this.deps;
    const phone = normalizePhone(input.phone);
    if (!phone) throw invalidInput('phone must be an international number such as +14155550123');
    const type = this.byId.get(input.type);
    if (!type)
      throw invalidInput(
        `type must be one of ${[...this.byId.keys()].join(', ')} (GET /api/session/temporary lists them)`,
      );
    if (this.deps.numbers.length === 0)
      throw new AppError('numbers_busy', 'this server has no temporary numbers to call from (TEMPORARY_NUMBERS)');
    await limiter.consume(`temporary:ip:${meta.ip}`, rateLimits.temporarySessionPerIp);
    await limiter.consume(`temporary:user:${userId}`, rateLimits.temporarySessionPerUser);
    await limiter.consume(`temporary:phone:${phone}`, rateLimits.temporarySessionPerPhone);

    const code = randomDigits(6);
    const nonce = randomToken(16);
    const issued = await tokens.sign(
      KEY_USE,
      userId,
      { phone, type: type.id, nonce, codeHash: this.codeHash(userId, phone, type.id, nonce, code) },
      TEMPORARY_KEY_TTL_SECONDS,
    );
    try {
      await sms.send({
        to: phone,
        body: `Your Workspace test call code is ${code}. It expires in ${TEMPORARY_KEY_TTL_SECONDS / 60} minutes.`,
        data: { code, purpose: 'temporary-session' },
      });
    } catch (err) {
      throw err instanceof AppError ? err : new AppError('provider_error', 'the SMS with the code could not be sent');
    }
    return { key: issued.token, expiresAt: iso(issued.expiresAt) };
  }

  /** POST: checks the code, spends the key, leases a number and starts the call → its session id. */
  async start(userId: string, input: { key: string; code: string; email: string }): Promise<{ sessionId: string }> {
    const { tokens, limiter, rateLimits, singleUse, store, clock } = this.deps;
    await limiter.consume(`temporary-submit:user:${userId}`, rateLimits.temporarySubmitPerUser);
    const key = await tokens.verify(input.key, KEY_USE, userId, badKey);
    const {
      phone,
      type: typeId,
      nonce,
      codeHash,
    } = key.claims as { phone: string; type: string; nonce: string; codeHash: string };
    const type = this.byId.get(typeId);
    if (!type) throw badKey(`its call type "${typeId}" is no longer offered`);

    try {
      await limiter.consume(`temporary-key:${key.jti}`, this.attemptRule);
    } catch (err) {
      if (err instanceof AppError && err.code === 'rate_limited')
        throw new AppError(
          'too_many_attempts',
          `${TEMPORARY_KEY_MAX_ATTEMPTS} codes were tried with this key: request a new one`,
        );
      throw err;
    }
    if (!safeEqual(this.codeHash(userId, phone, typeId, nonce, input.code.trim()), codeHash))
      throw new AppError('invalid_code', 'the code is not the one sent with this key');
    if (!(await singleUse.spend('temporary-session', key.jti, key.expiresAt))) throw badKey('it was already used');

    const now = clock.now();
    const lease = await this.leaseNumber(userId, now, now + type.maxDurationSeconds * 1000 + LEASE_MARGIN_MS);
    if (!lease) {
      await singleUse.restore('temporary-session', key.jti);
      throw new AppError('numbers_busy', 'every temporary number is in a call: try again in a few minutes', undefined, {
        'retry-after': '60',
      });
    }
    try {
      const call = await this.deps.sessions.assemble(
        userId,
        {
          agent: type.agent,
          contact: { name: (await this.deps.firstName(userId)) ?? 'there', phone },
          type: 'prompt',
          prompt: type.prompt,
        },
        lease.number,
      );
      return await this.deps.calls.start(
        userId,
        { ...call, firstMessage: type.firstMessage, maxDurationSeconds: type.maxDurationSeconds },
        null,
        {
          // A test call from the operator's pool: the operator's cost, limited by the rate limits above, never charged.
          free: true,
          // Recorded before the audio server has the call, so even a call that ends at once finds its session here.
          onCreated: async (sessionId) => {
            await store.attachSession(lease.number, lease.leasedAt, sessionId);
            await store.insertSession({
              session_id: sessionId,
              user_id: userId,
              type: type.id,
              phone,
              email: input.email,
              number: lease.number,
              created_at: now,
              summary_sent_at: null,
            });
          },
        },
      );
    } catch (err) {
      // Nothing was placed: the number goes back and the key may be used again.
      await store.release(lease.number, lease.leasedAt);
      await singleUse.restore('temporary-session', key.jti);
      throw err;
    }
  }

  /** Housekeeping: frees numbers whose calls never reported an end, and sends summaries a stopped process left unsent. */
  async housekeep(now: number): Promise<void> {
    await this.deps.store.deleteExpiredLeases(now);
    for (const session of await this.deps.store.listUnsentFinished(now - SUMMARY_BACKSTOP_MS, 50)) {
      const outcome = await this.deps.calls.outcome(session.session_id);
      if (outcome) await this.sendSummary(session, outcome);
    }
  }

  private codeHash(userId: string, phone: string, type: string, nonce: string, code: string): string {
    return hmacHex(this.codeKey, `${userId}:${phone}:${type}:${nonce}:${code}`);
  }

  /** A free number of the pool, leased until `expiresAt`; null when all are in calls. */
  private async leaseNumber(
    userId: string,
    now: number,
    expiresAt: number,
  ): Promise<{ number: string; leasedAt: number } | null> {
    const busy = await this.deps.store.leasedNumbers(now);
    // Free numbers first, in random order, so instances do not all race for the first one.
    const free = this.deps.numbers.filter((n) => !busy.has(n)).sort(() => Math.random() - 0.5);
    for (const number of free) {
      if (await this.deps.store.lease(number, userId, now, expiresAt)) return { number, leasedAt: now };
    }
    return null;
  }

  private async callFinished(sessionId: string, final: CallStatusPayload): Promise<void> {
    const session = await this.deps.store.findSession(sessionId);
    if (!session) return;
    await this.deps.store.releaseForSession(sessionId);
    // A failure here is retried by housekeep(): the summary stays unclaimed.
    await this.sendSummary(session, final).catch(() => undefined);
  }

  /** Emails the summary once, even when the call's end is handled twice. */
  private async sendSummary(session: TemporarySessionsTable, final: CallStatusPayload): Promise<void> {
    const { store, email, clock } = this.deps;
    const sessionId = session.session_id;
    if (!(await store.claimSummary(sessionId, clock.now()))) return;
    const type = this.byId.get(session.type);
    const lines = (final.transcript ?? []).map((l) => `${l.role === 'agent' ? 'Agent' : 'You'}: ${l.text}`);
    const text = [
      `Your test call "${type?.name ?? session.type}" to ${session.phone} ended: ${final.status.replace('_', ' ')}.`,
      `Duration: ${final.duration_seconds ?? 0} s. Called from ${session.number}. Session ${sessionId}.`,
      '',
      lines.length ? 'Transcript:' : 'No transcript was recorded.',
      ...lines,
    ].join('\n');
    try {
      await email.send({
        to: session.email,
        subject: `Your test call: ${type?.name ?? session.type}`,
        text,
        data: { sessionId, status: final.status, durationSeconds: final.duration_seconds ?? 0 },
      });
    } catch (err) {
      await store.unclaimSummary(sessionId);
      throw err;
    }
  }
}
