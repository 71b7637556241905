// TOTP two-factor authentication (spec 3.1, 4.4): RFC 6238, SHA-1, 6 digits,
// 30 s steps, ±1 step of clock skew. Secrets are sealed with the master key;
// each accepted step is recorded so a code works once only. Ten single-use
// recovery codes (stored as SHA-256) stand in for a lost authenticator.
import { randomInt } from 'node:crypto';
import { HOTP, Secret, TOTP } from 'otpauth';
import type { AuthSettings } from '../../config.js';
import type { AuthContext } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AuditAction, AuditLog, RequestMeta } from '../platform/audit.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { AuthService, SessionResult } from './service.js';
import type { TwoFactorStore, TwoFactorUser } from './two-factor-store.js';

const ISSUER = 'Workspace';
const ALGORITHM = 'SHA1';
const DIGITS = 6;
const PERIOD_SECONDS = 30;
const SKEW_STEPS = 1;
const SECRET_BYTES = 20;
const RECOVERY_CODE_COUNT = 10;
/** Crockford's base32 alphabet: no i, l, o or u, so codes read back without ambiguity. */
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const RECOVERY_HALF = 5;

export interface TwoFactorSetup {
  status: '2fa_setup';
  otpauthUrl: string;
  base32: string;
}

/** A recovery code from the CSPRNG: `xxxxx-xxxxx`, 50 bits. */
export function generateRecoveryCode(): string {
  let out = '';
  for (let i = 0; i < RECOVERY_HALF * 2; i++) {
    if (i === RECOVERY_HALF) out += '-';
    out += RECOVERY_ALPHABET[randomInt(0, RECOVERY_ALPHABET.length)];
  }
  return out;
}

/** The canonical form of a typed recovery code (case, spaces, dashes and Crockford look-alikes forgiven), or null. */
export function canonicalRecoveryCode(input: string): string | null {
  const cleaned = input.toLowerCase().replace(/[\s-]/g, '').replace(/o/g, '0').replace(/[il]/g, '1');
  if (cleaned.length !== RECOVERY_HALF * 2) return null;
  for (const ch of cleaned) if (!RECOVERY_ALPHABET.includes(ch)) return null;
  return cleaned;
}

const hashRecoveryCode = (canonical: string) => sha256Hex(`recovery:${canonical}`);

/**
 * The earliest time step within the skew window, later than `after`, whose
 * code equals `code`; null when none does. Every candidate is compared in
 * constant time and the loop never exits early.
 */
export function matchTotpStep(base32: string, code: string, now: number, after: number | null): number | null {
  const secret = Secret.fromBase32(base32);
  const current = Math.floor(now / 1000 / PERIOD_SECONDS);
  let matched: number | null = null;
  for (let step = current - SKEW_STEPS; step <= current + SKEW_STEPS; step++) {
    const expected = HOTP.generate({ secret, algorithm: ALGORITHM, digits: DIGITS, counter: step });
    const equal = safeEqual(expected, code);
    if (equal && matched === null && (after === null || step > after)) matched = step;
  }
  return matched;
}

const invalidCode = () => new AppError('invalid_code', 'the code is missing, wrong, expired or already used');

export class TwoFactorService {
  constructor(
    private readonly config: AuthSettings,
    private readonly store: TwoFactorStore,
    private readonly secretBox: SecretBox,
    private readonly auth: AuthService,
    private readonly limiter: RateLimiter,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** Starts set-up: a new secret awaits confirmation through confirmEnable. Refused once 2FA is configured (use reset). */
  async requestEnable(caller: AuthContext, meta: RequestMeta): Promise<TwoFactorSetup> {
    const user = await this.userOf(caller);
    if (user.two_factor_enabled) {
      throw new AppError(
        'conflict',
        'two-factor authentication is already configured: POST /api/auth/2fa/reset replaces the secret',
        {
          reset: '/api/auth/2fa/reset',
        },
      );
    }
    const setup = await this.issuePendingSecret(user);
    await this.audit.record({ userId: user.id, action: '2fa.setup', success: true, meta });
    return setup;
  }

  /**
   * Confirms the pending secret with a code from it: it becomes the active
   * secret, 2FA is on, new recovery codes replace the old ones, and the
   * caller's session is re-issued with 2FA passed.
   */
  async confirmEnable(
    caller: AuthContext,
    code: string,
    meta: RequestMeta,
  ): Promise<{ session: SessionResult; recoveryCodes: string[] }> {
    await this.limiter.consume(`2fa:user:${caller.userId}`, this.config.rateLimits.twoFactorPerUser);
    const user = await this.userOf(caller);
    const pendingSealed = user.totp_pending_secret;
    if (!pendingSealed) {
      throw new AppError(
        'two_factor_setup_missing',
        'no two-factor set-up is pending: POST /api/auth/2fa/enable/request (or /api/auth/2fa/reset) first',
      );
    }
    const now = this.clock.now();
    const digits = code.replace(/\s/g, '');
    // A pending secret has never accepted a code, so any step in the window
    // is new for it; the old secret's last step must not block it.
    const step = /^\d{6}$/.test(digits)
      ? matchTotpStep(this.secretBox.openText(pendingSealed), digits, now, null)
      : null;
    if (step === null) return this.fail(user.id, '2fa.enable', meta, 'wrong_code');

    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, generateRecoveryCode);
    const rows = recoveryCodes.map((c) => ({
      id: newId(now),
      user_id: user.id,
      code_hash: hashRecoveryCode(canonicalRecoveryCode(c)!),
      used_at: null,
      created_at: now,
    }));
    const lastStep = Math.max(step, Number(user.totp_last_step ?? step));
    if (!(await this.store.confirmPendingSecret(user.id, pendingSealed, lastStep, rows, now))) {
      throw new AppError('conflict', 'the pending secret changed meanwhile: request a new one');
    }
    const session = await this.auth.refreshSession(caller, { twoFactorPassed: true });
    await this.audit.record({
      userId: user.id,
      action: '2fa.enable',
      success: true,
      meta,
      detail: { replaced: Boolean(user.two_factor_enabled) },
    });
    return { session, recoveryCodes };
  }

  /** Completes a sign-in that answered 2fa_required, with a TOTP code or an unused recovery code. */
  async verify(caller: AuthContext, code: string, meta: RequestMeta): Promise<SessionResult> {
    await this.limiter.consume(`2fa:user:${caller.userId}`, this.config.rateLimits.twoFactorPerUser);
    const user = await this.configuredUserOf(caller);
    const method = await this.checkCode(user, code, '2fa.verify', meta);
    const session = await this.auth.refreshSession(caller, { twoFactorPassed: true });
    await this.audit.record({ userId: user.id, action: '2fa.verify', success: true, meta, detail: { method } });
    return session;
  }

  /**
   * Issues a new pending secret after checking a code of the active one. The
   * active secret keeps working until the new one is confirmed through
   * confirmEnable, so losing the new QR code locks nobody out.
   */
  async reset(caller: AuthContext, code: string, meta: RequestMeta): Promise<TwoFactorSetup> {
    await this.limiter.consume(`2fa:user:${caller.userId}`, this.config.rateLimits.twoFactorPerUser);
    const user = await this.configuredUserOf(caller);
    const method = await this.checkCode(user, code, '2fa.reset', meta);
    const setup = await this.issuePendingSecret(user);
    await this.audit.record({ userId: user.id, action: '2fa.reset', success: true, meta, detail: { method } });
    return setup;
  }

  private async userOf(caller: AuthContext): Promise<TwoFactorUser> {
    const user = await this.store.findUser(caller.userId);
    if (!user) throw new AppError('unauthenticated', 'the user no longer exists');
    return user;
  }

  private async configuredUserOf(caller: AuthContext): Promise<TwoFactorUser & { totp_secret: string }> {
    const user = await this.userOf(caller);
    if (!user.two_factor_enabled || !user.totp_secret) {
      throw new AppError('two_factor_not_configured', 'two-factor authentication is not configured for this account');
    }
    return user as TwoFactorUser & { totp_secret: string };
  }

  private async issuePendingSecret(user: TwoFactorUser): Promise<TwoFactorSetup> {
    const secret = new Secret({ size: SECRET_BYTES });
    await this.store.setPendingSecret(user.id, this.secretBox.seal(secret.base32), this.clock.now());
    const totp = new TOTP({
      issuer: ISSUER,
      label: user.email,
      secret,
      algorithm: ALGORITHM,
      digits: DIGITS,
      period: PERIOD_SECONDS,
    });
    return { status: '2fa_setup', otpauthUrl: totp.toString(), base32: secret.base32 };
  }

  /** Accepts a code of the active secret (once per step) or an unused recovery code (then used up); throws invalid_code otherwise. */
  private async checkCode(
    user: TwoFactorUser & { totp_secret: string },
    code: string,
    action: AuditAction,
    meta: RequestMeta,
  ): Promise<'totp' | 'recovery'> {
    const digits = code.replace(/\s/g, '');
    if (/^\d{6}$/.test(digits)) {
      const step = matchTotpStep(
        this.secretBox.openText(user.totp_secret),
        digits,
        this.clock.now(),
        user.totp_last_step === null ? null : Number(user.totp_last_step),
      );
      if (step === null) return this.fail(user.id, action, meta, 'wrong_code');
      if (!(await this.store.advanceLastStep(user.id, step))) return this.fail(user.id, action, meta, 'replayed_code');
      return 'totp';
    }
    const canonical = canonicalRecoveryCode(code);
    if (canonical === null) return this.fail(user.id, action, meta, 'malformed_code');
    const hash = hashRecoveryCode(canonical);
    let matchedId: string | null = null;
    for (const row of await this.store.listUnusedRecoveryCodes(user.id)) {
      if (safeEqual(row.code_hash, hash) && matchedId === null) matchedId = row.id;
    }
    if (matchedId === null || !(await this.store.useRecoveryCode(matchedId, this.clock.now())))
      return this.fail(user.id, action, meta, 'wrong_recovery_code');
    return 'recovery';
  }

  private async fail(userId: string, action: AuditAction, meta: RequestMeta, reason: string): Promise<never> {
    await this.audit.record({ userId, action, success: false, meta, detail: { reason } });
    throw invalidCode();
  }
}
