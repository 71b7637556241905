// Sign-up, sign-in, sign-out and the authentication state machine of spec 3.1.
// Other account flows (phone, reset, 2FA, external) start sessions through
// startSession so every token is issued one way.
import type { AuthSettings } from '../../config.js';
import type { AuthContext } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { AuditLog, RequestMeta } from '../platform/audit.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { BackgroundMail } from './account-mail.js';
import { newId } from '../../lib/ids.js';
import { PASSWORD_MAX, PASSWORD_MIN, type PasswordHasher } from './passwords.js';
import { type UserRow, type UserStore, newUserRow } from './store.js';
import type { TokenService } from './tokens.js';

export type AuthStatus = 'ok' | 'phone_not_verified' | '2fa_required';

export interface AuthInfo {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  phoneVerified: boolean;
  twoFactorPassed: boolean;
  twoFactorConfigured: boolean;
}

export interface SessionResult {
  status: AuthStatus;
  token: string;
  auth: AuthInfo;
  /** Cookie lifetime in seconds; null when the token must not be put in the cookie (2FA pending). */
  cookieMaxAge: number | null;
}

export interface RegisterInput {
  firstName?: string;
  lastName?: string;
  email: string;
  phone: string;
  password: string;
  confirmPassword: string;
  remember?: boolean;
}

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** E.164 after removing spaces, dashes, dots and brackets; null when it is not a phone number. */
export function normalizePhone(phone: string): string | null {
  const cleaned = phone.replace(/[\s\-().]/g, '');
  return /^\+[1-9]\d{6,14}$/.test(cleaned) ? cleaned : null;
}

export function checkNewPassword(password: string, confirmPassword: string): void {
  if (password.length < PASSWORD_MIN)
    throw new AppError('invalid_input', `password must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX)
    throw new AppError('invalid_input', `password must be at most ${PASSWORD_MAX} characters`);
  if (password !== confirmPassword)
    throw new AppError('passwords_mismatch', 'password and confirmPassword do not match');
}

export function statusOf(info: AuthInfo): AuthStatus {
  if (!info.phoneVerified) return 'phone_not_verified';
  if (info.twoFactorConfigured && !info.twoFactorPassed) return '2fa_required';
  return 'ok';
}

/** 2FA counts as passed only where it is configured. */
function authInfo(fields: Omit<AuthInfo, 'twoFactorPassed'>, twoFactorPassed: boolean): AuthInfo {
  return { ...fields, twoFactorPassed: fields.twoFactorConfigured && twoFactorPassed };
}

export function authInfoOf(user: UserRow, twoFactorPassed: boolean): AuthInfo {
  const { id, email } = user;
  return authInfo(
    {
      id,
      email,
      firstName: user.first_name,
      lastName: user.last_name,
      phoneVerified: Boolean(user.phone_verified),
      twoFactorConfigured: Boolean(user.two_factor_enabled),
    },
    twoFactorPassed,
  );
}

export class AuthService {
  constructor(
    private readonly config: AuthSettings,
    private readonly users: UserStore,
    private readonly tokens: TokenService,
    private readonly passwords: PasswordHasher,
    private readonly mail: BackgroundMail,
    private readonly limiter: RateLimiter,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /**
   * Issues a session token for the user in the state it is in. A token of a
   * user with 2FA configured but not yet passed is short-lived and reaches
   * only /api/auth, /api/auth/2fa/verify and logout.
   */
  async startSession(
    user: UserRow,
    options: { remember?: boolean; twoFactorPassed?: boolean } = {},
  ): Promise<SessionResult> {
    const info = authInfoOf(user, options.twoFactorPassed === true);
    const { twoFactorPassed } = info;
    const status = statusOf(info);
    const ttlSeconds =
      status === '2fa_required'
        ? this.config.twoFactorPendingTtlSeconds
        : options.remember
          ? this.config.rememberTtlSeconds
          : this.config.sessionTtlSeconds;
    const issued = await this.tokens.issue(user, { ttlSeconds, twoFactorPassed });
    return { status, token: issued.token, auth: info, cookieMaxAge: status === '2fa_required' ? null : ttlSeconds };
  }

  /** Re-issues the caller's session after a state change (phone verified, 2FA passed), keeping its remember lifetime. */
  async refreshSession(auth: AuthContext, options: { twoFactorPassed?: boolean } = {}): Promise<SessionResult> {
    const user = await this.users.findById(auth.userId);
    if (!user) throw new AppError('unauthenticated', 'the user no longer exists');
    const remember =
      auth.credential.kind === 'session' &&
      auth.credential.expiresAt - this.clock.now() > this.config.sessionTtlSeconds * 1000;
    const result = await this.startSession(user, {
      remember,
      twoFactorPassed: options.twoFactorPassed ?? auth.twoFactorPassed,
    });
    if (auth.credential.kind === 'session')
      await this.users.revokeToken(auth.credential.jti, user.id, auth.credential.expiresAt);
    return result;
  }

  /**
   * Creates the account and signs it in. An email that already has an account
   * gets the same answer (status, body shape, cookie, about the same time: the
   * password is hashed in both paths), built around a token that authenticates
   * nobody; nothing is created or changed, and the owner is emailed that
   * someone tried to sign up with the address. `notice` settles when that
   * email is sent (or failed), for the caller to log; it is already settled
   * for new accounts.
   */
  async register(input: RegisterInput, meta: RequestMeta): Promise<{ session: SessionResult; notice: Promise<void> }> {
    await this.limiter.consume(`register:ip:${meta.ip}`, this.config.rateLimits.registerPerIp);
    const email = normalizeEmail(input.email);
    const phone = normalizePhone(input.phone);
    if (!phone) throw new AppError('invalid_input', 'phone must be an international number such as +14155550123');
    checkNewPassword(input.password, input.confirmPassword);
    const user = newUserRow(
      {
        email,
        firstName: (input.firstName ?? '').trim(),
        lastName: (input.lastName ?? '').trim(),
        phone,
        passwordHash: await this.passwords.hash(input.password),
      },
      this.clock.now(),
    );
    if (await this.users.insert(user)) {
      await this.audit.record({ userId: user.id, action: 'register', success: true, meta });
      return { session: await this.startSession(user, { remember: input.remember }), notice: Promise.resolve() };
    }
    await this.audit.record({
      userId: null,
      action: 'register',
      success: false,
      meta,
      detail: { email, reason: 'email_taken' },
    });
    const notice = this.mail.run(() => this.sendSignUpNotice(email));
    // The answer a new account would get, for a user id that does not exist: its token is
    // signed like any other and answers 401 wherever it is used.
    const decoy = { ...user, id: newId() };
    return { session: await this.startSession(decoy, { remember: input.remember }), notice };
  }

  /** Tells the owner of `email` that someone tried to sign up with it (a few per hour at most, so it cannot be used to flood them). */
  private async sendSignUpNotice(email: string): Promise<void> {
    const owner = await this.users.findByEmail(email);
    if (!owner) return;
    try {
      await this.limiter.consume(`signup-notice:email:${email}`, this.config.rateLimits.signupNoticePerEmail);
    } catch {
      return;
    }
    const resetUrl = `${this.config.publicUrl}/reset-password`;
    await this.mail.send({
      to: owner.email,
      subject: 'Someone tried to sign up with your email',
      text:
        `Someone tried to create a Workspace account with this email address, which already has an account.\n\n` +
        `Nothing was created and nothing about your account changed.\n\n` +
        `If it was you: sign in with your password instead. Forgot it? Reset it at ${resetUrl}\n\n` +
        `If it was not you, you can ignore this email.\n`,
      data: { reason: 'sign_up_existing_email', url: resetUrl },
    });
  }

  /** Checks the credentials; wrong password and unknown email fail alike and take the same time. */
  async login(
    input: { email: string; password: string; remember?: boolean },
    meta: RequestMeta,
  ): Promise<SessionResult> {
    const email = normalizeEmail(input.email);
    await this.limiter.consume(`login:ip:${meta.ip}`, this.config.rateLimits.loginPerIp);
    await this.limiter.consume(`login:email:${email}`, this.config.rateLimits.loginPerEmail);
    const user = await this.users.findByEmail(email);
    const valid = await this.passwords.verify(user?.password_hash ?? null, input.password);
    if (!user || !valid) {
      await this.audit.record({ userId: user?.id ?? null, action: 'login', success: false, meta, detail: { email } });
      throw new AppError('invalid_credentials', 'email or password is incorrect');
    }
    const result = await this.startSession(user, { remember: input.remember });
    await this.audit.record({
      userId: user.id,
      action: 'login',
      success: true,
      meta,
      detail: { status: result.status },
    });
    return result;
  }

  /** Ends the session of a token (API keys are revoked through DELETE /api/api-keys/{id}). */
  async logout(auth: AuthContext | null, meta: RequestMeta): Promise<void> {
    if (auth?.credential.kind !== 'session') return;
    await this.users.revokeToken(auth.credential.jti, auth.userId, auth.credential.expiresAt);
    await this.audit.record({ userId: auth.userId, action: 'logout', success: true, meta });
  }

  /** The caller's state as the guard just read it from the database (no second read). */
  status(auth: AuthContext): { status: AuthStatus; auth: AuthInfo } {
    const { userId: id, email, firstName, lastName, phoneVerified, twoFactorConfigured } = auth;
    const info = authInfo({ id, email, firstName, lastName, phoneVerified, twoFactorConfigured }, auth.twoFactorPassed);
    return { status: statusOf(info), auth: info };
  }
}
