// Password reset (spec 4.3): a single-use link by email, then a new password
// that ends every other session and API key and signs the user in (still through 2FA).
// Only a SHA-256 of the 32-byte token is stored.
import type { AuthSettings } from '../../config.js';
import { checkReturnUrl } from '../../http/return-url.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import type { AuditLog, RequestMeta } from '../platform/audit.js';
import type { BackgroundMail } from './account-mail.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { PasswordHasher } from './passwords.js';
import type { PasswordResetStore } from './reset-store.js';
import { type AuthService, type SessionResult, checkNewPassword, normalizeEmail } from './service.js';
import type { UserStore } from './store.js';

export const RESET_TOKEN_TTL_MS = 30 * 60_000;

export interface ResetRequested {
  status: 'requested';
  message: string;
}

const REQUESTED: ResetRequested = {
  status: 'requested',
  message: 'if an account with this email exists, a reset link has been sent to it',
};

export class PasswordResetService {
  constructor(
    private readonly config: AuthSettings,
    private readonly users: UserStore,
    private readonly resets: PasswordResetStore,
    private readonly auth: AuthService,
    private readonly passwords: PasswordHasher,
    private readonly mail: BackgroundMail,
    private readonly limiter: RateLimiter,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The page the link opens: returnUrl when its origin is allowed, else PUBLIC_URL/reset-password. */
  private linkBase(returnUrl: string | undefined): URL {
    if (returnUrl === undefined) return new URL(`${this.config.publicUrl}/reset-password`);
    return checkReturnUrl(returnUrl, this.config.returnUrlOrigins, 'returnUrl');
  }

  /**
   * Answers the same whether the email has an account or not. The email is
   * sent in the background: `delivery` settles when it is sent (or failed),
   * for the caller to log; it is an already-settled promise for unknown emails.
   */
  async request(
    input: { email: string; returnUrl?: string },
    meta: RequestMeta,
  ): Promise<{ answer: ResetRequested; delivery: Promise<void> }> {
    const base = this.linkBase(input.returnUrl);
    const email = normalizeEmail(input.email);
    await this.limiter.consume(`reset-request:ip:${meta.ip}`, this.config.rateLimits.resetRequestPerIp);
    await this.limiter.consume(`reset-request:email:${email}`, this.config.rateLimits.resetRequestPerEmail);

    const user = await this.users.findByEmail(email);
    if (!user) {
      await this.audit.record({
        userId: null,
        action: 'password.reset_request',
        success: false,
        meta,
        detail: { email, reason: 'unknown_email' },
      });
      return { answer: REQUESTED, delivery: Promise.resolve() };
    }
    const now = this.clock.now();
    const token = randomToken(32);
    await this.resets.insert({
      token_hash: sha256Hex(token),
      user_id: user.id,
      expires_at: now + RESET_TOKEN_TTL_MS,
      used_at: null,
      created_at: now,
    });
    await this.audit.record({ userId: user.id, action: 'password.reset_request', success: true, meta });

    base.searchParams.set('token', token);
    const url = base.toString();
    const minutes = RESET_TOKEN_TTL_MS / 60_000;
    const delivery = this.mail.run(() =>
      this.mail.send({
        to: user.email,
        subject: 'Reset your Workspace password',
        text:
          `Someone (hopefully you) asked to reset the password of your Workspace account.\n\n` +
          `Open this link within ${minutes} minutes to choose a new password:\n\n${url}\n\n` +
          `Choosing a new password signs out every session of the account and deletes all of its API keys: ` +
          `create new keys afterwards for the programs that used them.\n\n` +
          `The link works once. If you did not ask for this, ignore this email: your password stays as it is.\n`,
        data: { token, url },
      }),
    );
    return { answer: REQUESTED, delivery };
  }

  /** Waits for every email still being sent (graceful shutdown). */
  drain(): Promise<void> {
    return this.mail.drain();
  }

  /** Sets the new password, ends every other session, deletes every API key and starts a new session (2FA still applies). */
  async submit(
    input: { token: string; password: string; confirmPassword: string },
    meta: RequestMeta,
  ): Promise<SessionResult> {
    await this.limiter.consume(`reset-submit:ip:${meta.ip}`, this.config.rateLimits.resetSubmitPerIp);
    checkNewPassword(input.password, input.confirmPassword);
    const tokenHash = sha256Hex(input.token);
    const invalid = () =>
      new AppError('invalid_token', 'the reset link is invalid, expired or already used: request a new one');
    const found = await this.resets.findByHash(tokenHash);
    if (!found || found.used_at !== null || Number(found.expires_at) <= this.clock.now()) throw invalid();

    const passwordHash = await this.passwords.hash(input.password);
    const user = await this.resets.complete(tokenHash, passwordHash, this.clock.now());
    if (!user) throw invalid();
    const session = await this.auth.startSession(user);
    await this.audit.record({
      userId: user.id,
      action: 'password.reset',
      success: true,
      meta,
      detail: { status: session.status },
    });
    return session;
  }
}
