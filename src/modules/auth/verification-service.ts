// Phone verification (spec 4.2): a 6-digit code by SMS, confirmed by the
// signed-in user. Only an HMAC of the code is stored (keyed with a subkey of
// the master key, bound to the code's id and phone), so a database dump does
// not reveal live codes even though a 6-digit space is small.
import type { AuthSettings } from '../../config.js';
import type { AuthContext } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { hmacHex, randomDigits, safeEqual } from '../../lib/crypto.js';
import { iso } from '../../lib/time.js';
import { newId } from '../../lib/ids.js';
import type { SmsProvider } from '../../providers/sms/interface.js';
import type { AuditLog, RequestMeta } from '../platform/audit.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import { type AuthService, type SessionResult, normalizePhone } from './service.js';
import type { UserStore } from './store.js';
import type { PhoneCodeRow, PhoneCodeStore } from './verification-store.js';

export const PHONE_CODE_DIGITS = 6;
export const PHONE_CODE_TTL_MS = 10 * 60_000;
/** Tries (wrong or right) one code allows; after that it is dead. */
export const PHONE_CODE_MAX_ATTEMPTS = 5;

export interface VerificationSent {
  status: 'sent';
  /** The number the code went to, masked (+1415•••0123). */
  phone: string;
  expiresAt: string;
}

/** Shows the first and last few digits of an E.164 number, hiding at least three in the middle. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/^\+/, '');
  const visible = Math.max(0, digits.length - 3);
  const tail = Math.min(4, Math.floor(visible / 2));
  const head = Math.min(4, visible - tail);
  return `+${digits.slice(0, head)}${'•'.repeat(digits.length - head - tail)}${digits.slice(digits.length - tail)}`;
}

export class PhoneVerificationService {
  private readonly codeKey: string;

  constructor(
    private readonly config: AuthSettings,
    private readonly users: UserStore,
    private readonly codes: PhoneCodeStore,
    private readonly auth: AuthService,
    private readonly sms: SmsProvider,
    private readonly limiter: RateLimiter,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
    masterKey: Buffer,
  ) {
    this.codeKey = hmacHex(masterKey, 'workspace/phone-codes/v1');
  }

  private hashCode(id: string, phone: string, code: string): string {
    return hmacHex(this.codeKey, `${id}:${phone}:${code}`);
  }

  /**
   * Sends a new code to `phone` (which replaces the number on record once
   * verified) or to the number on record. Earlier codes stop working.
   */
  async request(caller: AuthContext, input: { phone?: string }, meta: RequestMeta): Promise<VerificationSent> {
    const user = await this.users.findById(caller.userId);
    if (!user) throw new AppError('unauthenticated', 'the user no longer exists');
    let phone: string | null;
    if (input.phone !== undefined) {
      phone = normalizePhone(input.phone);
      if (!phone) throw new AppError('invalid_input', 'phone must be an international number such as +14155550123');
    } else {
      phone = user.phone;
    }
    if (!phone) throw new AppError('no_phone', 'no phone number on record: send { phone: "+14155550123" }');

    const limits = this.config.rateLimits;
    await this.limiter.consume(`verify-request:ip:${meta.ip}`, limits.verifyRequestPerIp);
    await this.limiter.consume(`verify-request:user:${user.id}`, limits.verifyRequestPerUser);
    await this.limiter.consume(`verify-request:phone:${phone}`, limits.verifyRequestPerPhone);

    const now = this.clock.now();
    const code = randomDigits(PHONE_CODE_DIGITS);
    const id = newId();
    const row: PhoneCodeRow = {
      id,
      user_id: user.id,
      phone,
      code_hash: this.hashCode(id, phone, code),
      attempts: 0,
      expires_at: now + PHONE_CODE_TTL_MS,
      consumed_at: null,
      created_at: now,
    };
    await this.codes.replace(row);
    try {
      await this.sms.send({
        to: phone,
        body: `Your Workspace verification code is ${code}. It expires in ${PHONE_CODE_TTL_MS / 60_000} minutes.`,
        data: { code },
      });
    } catch (err) {
      // A code nobody received must not linger as the current one.
      await this.codes.delete(id);
      await this.audit.record({
        userId: user.id,
        action: 'phone.verify_request',
        success: false,
        meta,
        detail: { phone: maskPhone(phone) },
      });
      throw err instanceof AppError ? err : new AppError('provider_error', 'the SMS could not be sent');
    }
    await this.audit.record({
      userId: user.id,
      action: 'phone.verify_request',
      success: true,
      meta,
      detail: { phone: maskPhone(phone) },
    });
    return { status: 'sent', phone: maskPhone(phone), expiresAt: iso(row.expires_at) };
  }

  /** Checks the code; on success the phone is verified and the caller gets a refreshed session. */
  async submit(caller: AuthContext, input: { code: string }, meta: RequestMeta): Promise<SessionResult> {
    await this.limiter.consume(`verify-submit:user:${caller.userId}`, this.config.rateLimits.verifySubmitPerUser);
    const current = await this.codes.findCurrent(caller.userId);
    const fail = async (code: 'invalid_code' | 'code_expired' | 'too_many_attempts', message: string) => {
      await this.audit.record({
        userId: caller.userId,
        action: 'phone.verify',
        success: false,
        meta,
        detail: { reason: code },
      });
      return new AppError(code, message);
    };
    if (!current)
      throw await fail('invalid_code', 'the code is not valid: request one with POST /api/auth/verify/request');
    if (Number(current.expires_at) <= this.clock.now())
      throw await fail('code_expired', 'the code has expired: request a new one');
    if (!(await this.codes.claimAttempt(current.id, PHONE_CODE_MAX_ATTEMPTS))) {
      throw await fail('too_many_attempts', 'too many wrong codes: request a new one');
    }
    const given = input.code.trim();
    if (!safeEqual(this.hashCode(current.id, current.phone, given), current.code_hash)) {
      const left = PHONE_CODE_MAX_ATTEMPTS - (Number(current.attempts) + 1);
      throw await fail(
        'invalid_code',
        left > 0
          ? `the code is not valid (${left} tries left)`
          : 'the code is not valid; no tries left: request a new one',
      );
    }

    const user = await this.users.findById(caller.userId);
    if (!user) throw new AppError('unauthenticated', 'the user no longer exists');
    if (!(await this.codes.consumeAndVerify(current, this.clock.now()))) {
      throw await fail('invalid_code', 'the code is not valid: request one with POST /api/auth/verify/request');
    }
    await this.audit.record({
      userId: user.id,
      action: 'phone.verify',
      success: true,
      meta,
      detail: { phone: maskPhone(current.phone) },
    });
    if (user.phone !== current.phone) {
      await this.audit.record({
        userId: user.id,
        action: 'phone.change',
        success: true,
        meta,
        detail: { from: user.phone ? maskPhone(user.phone) : null, to: maskPhone(current.phone) },
      });
    }
    return this.auth.refreshSession(caller);
  }
}
