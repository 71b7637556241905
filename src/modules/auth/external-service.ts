// External sign-in (spec 4.5): start an OpenID Connect flow, take the
// provider's callback, and complete it as a sign-in, a sign-up or the attach
// of the provider to the signed-in user. Sessions are issued by AuthService.
import type { AuthSettings } from '../../config.js';
import type { AuthContext } from '../../http/auth.js';
import { isTwoFactorPending } from '../../http/auth.js';
import { checkReturnUrl } from '../../http/return-url.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { randomToken, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import type { IdentityProvider } from '../../providers/oauth/interface.js';
import type { AuditLog, RequestMeta } from '../platform/audit.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import type { ExternalIdentityStore } from './external-store.js';
import { type AuthService, type SessionResult, normalizeEmail } from './service.js';
import { type UserRow, type UserStore, newUserRow } from './store.js';
import type { ExternalPendingTable } from './tables.js';

/** Lifetime of a started flow (oauth_states) and of a callback's one-time token (external_pending). */
export const EXTERNAL_FLOW_TTL_MS = 10 * 60_000;

export interface ProviderSummary {
  slug: string;
  name: string;
}

export interface ProviderMetadata extends ProviderSummary {
  issuer: string;
}

/** What the callback route answers: a redirect to the client's returnTo, or the session itself. */
export type CallbackOutcome = { kind: 'redirect'; location: string } | { kind: 'session'; session: SessionResult };

/** `url` with `name=value` added to its query (an existing value of that name is replaced). */
function withQuery(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.href;
}

export class ExternalSignInService {
  constructor(
    private readonly config: AuthSettings,
    private readonly providers: Map<string, IdentityProvider>,
    private readonly store: ExternalIdentityStore,
    private readonly users: UserStore,
    private readonly auth: AuthService,
    private readonly limiter: RateLimiter,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  listProviders(): ProviderSummary[] {
    return [...this.providers.values()].map((p) => ({ slug: p.slug, name: p.name }));
  }

  describe(slug: string): ProviderMetadata {
    const p = this.provider(slug);
    return { slug: p.slug, name: p.name, issuer: p.issuer };
  }

  /** The redirect_uri registered with every provider. */
  redirectUri(slug: string): string {
    return `${this.config.publicUrl}/api/auth/external/${encodeURIComponent(slug)}/redirect`;
  }

  /**
   * Starts a flow and returns the provider's authorization URL. A signed-in
   * caller attaches the provider to their account instead of signing in.
   */
  async init(
    slug: string,
    input: { returnTo?: string; caller: AuthContext | null },
    meta: RequestMeta,
  ): Promise<{ url: string; state: string }> {
    const provider = this.provider(slug);
    const returnTo = input.returnTo === undefined ? null : this.checkReturnTo(input.returnTo);
    if (input.caller && isTwoFactorPending(input.caller)) {
      throw new AppError(
        'two_factor_required',
        'two-factor verification is pending: POST /api/auth/2fa/verify before attaching a provider',
      );
    }
    await this.limiter.consume(`external_init:ip:${meta.ip}`, this.config.rateLimits.externalInitPerIp);
    const now = this.clock.now();
    await this.store.deleteExpired(now);
    const started = await provider.startAuthorization(this.redirectUri(slug));
    await this.store.insertState({
      state: started.state,
      provider: slug,
      code_verifier: started.codeVerifier,
      nonce: started.nonce,
      return_to: returnTo,
      attach_user_id: input.caller?.userId ?? null,
      expires_at: now + EXTERNAL_FLOW_TTL_MS,
    });
    return { url: started.url, state: started.state };
  }

  /**
   * Takes the provider's callback (its raw query string) and the state the
   * browser's cookie holds (`browserState`, set by /init). A callback opened in
   * another browser than the one that started the flow has no such cookie and
   * is refused without touching the flow. The flow's state is used once. With
   * a returnTo the browser goes back there with `externalToken` (or `error`);
   * without one the flow completes at once.
   */
  async handleCallback(
    slug: string,
    rawQuery: string,
    browserState: string | undefined,
    meta: RequestMeta,
  ): Promise<CallbackOutcome> {
    const provider = this.provider(slug);
    const params = new URLSearchParams(rawQuery);
    const state = params.get('state');
    if (state && (!browserState || !safeEqual(browserState, state))) {
      throw new AppError(
        'invalid_token',
        'this sign-in was not started in this browser (its state cookie is missing or belongs to another flow); start again from /init in the browser that completes it',
      );
    }
    const flow = state ? await this.store.takeState(state) : undefined;
    if (!flow || flow.provider !== slug || flow.expires_at <= this.clock.now()) {
      throw new AppError(
        'invalid_token',
        'the sign-in flow is unknown, already used or expired; start again from /init',
      );
    }
    const providerError = params.get('error');
    if (providerError !== null) {
      if (flow.return_to) return { kind: 'redirect', location: withQuery(flow.return_to, 'error', providerError) };
      const description = params.get('error_description');
      throw new AppError(
        'provider_refused',
        `provider "${slug}" answered ${providerError}${description ? `: ${description}` : ''}`,
      );
    }
    try {
      const callbackUrl = new URL(this.redirectUri(slug));
      callbackUrl.search = rawQuery;
      const identity = await provider.finishAuthorization(callbackUrl, {
        state: flow.state,
        nonce: flow.nonce,
        codeVerifier: flow.code_verifier,
      });
      const token = randomToken(32);
      await this.store.insertPending({
        token_hash: sha256Hex(token),
        provider: slug,
        subject: identity.subject,
        email: identity.email === null ? null : normalizeEmail(identity.email),
        email_verified: identity.emailVerified ? 1 : 0,
        first_name: identity.firstName.slice(0, 100),
        last_name: identity.lastName.slice(0, 100),
        attach_user_id: flow.attach_user_id,
        expires_at: this.clock.now() + EXTERNAL_FLOW_TTL_MS,
        used_at: null,
      });
      if (flow.return_to) return { kind: 'redirect', location: withQuery(flow.return_to, 'externalToken', token) };
      return { kind: 'session', session: await this.complete(token, meta) };
    } catch (err) {
      if (flow.return_to && err instanceof AppError)
        return { kind: 'redirect', location: withQuery(flow.return_to, 'error', err.code) };
      throw err;
    }
  }

  /**
   * Completes a callback's one-time token: signs in the user the identity is
   * linked to, else links it to the user who started the flow signed in, else
   * creates a user (no password, no phone: status phone_not_verified) when the
   * provider verified the email and no account has it. An existing account
   * with that email is never linked here (409 account_exists).
   */
  async complete(token: string, meta: RequestMeta): Promise<SessionResult> {
    const pending = await this.store.consumePending(sha256Hex(token), this.clock.now());
    if (!pending) throw new AppError('invalid_token', 'the registration token is unknown, already used or expired');
    const detail = { provider: pending.provider, subject: pending.subject };

    const linked = await this.store.findIdentity(pending.provider, pending.subject);
    if (linked) {
      if (pending.attach_user_id && linked.user_id !== pending.attach_user_id) {
        await this.audit.record({
          userId: pending.attach_user_id,
          action: 'external.link',
          success: false,
          meta,
          detail: { ...detail, reason: 'linked_to_other_user' },
        });
        throw new AppError('identity_conflict', 'this provider account is already linked to another user');
      }
      return this.signIn(await this.userOf(linked.user_id), detail, meta);
    }

    if (pending.attach_user_id) {
      const user = await this.userOf(pending.attach_user_id);
      await this.link(user, pending, meta);
      return this.signIn(user, detail, meta);
    }

    if (!pending.email) {
      throw new AppError(
        'provider_refused',
        `provider "${pending.provider}" did not share an email address; allow the email scope and try again`,
      );
    }
    // Checked before the lookup below, so an unverified email tells nothing about which accounts exist.
    if (!pending.email_verified) {
      throw new AppError(
        'email_not_verified',
        `provider "${pending.provider}" has not verified the email address ${pending.email}: verify it with the provider first, or sign up with a password`,
      );
    }
    // Never linked by email: no account here proves its owner controls its email (sign-up does not
    // confirm it), so linking would hand the account to whoever the provider says owns the address.
    // The owner signs in (password, or the provider they used) and attaches from that session.
    const existing = await this.users.findByEmail(pending.email);
    if (existing) {
      await this.audit.record({
        userId: existing.id,
        action: 'external.link',
        success: false,
        meta,
        detail: { ...detail, reason: 'account_exists' },
      });
      throw new AppError(
        'account_exists',
        'an account with this email already exists: sign in to it (with its password), then start this provider from that session (GET /api/auth/external/{provider}/init signed in) to attach it',
      );
    }

    const user = await this.createUser(pending);
    return this.signIn(user, { ...detail, created: true }, meta);
  }

  private provider(slug: string): IdentityProvider {
    const p = this.providers.get(slug);
    if (!p) throw new AppError('provider_not_found', `no external sign-in provider "${slug}" is configured`);
    return p;
  }

  private checkReturnTo(returnTo: string): string {
    return checkReturnUrl(returnTo, this.config.returnUrlOrigins, 'returnTo').href;
  }

  private async userOf(id: string): Promise<UserRow> {
    const user = await this.users.findById(id);
    if (!user) throw new AppError('invalid_token', 'the account this sign-in belongs to no longer exists');
    return user;
  }

  private async link(user: UserRow, pending: ExternalPendingTable, meta: RequestMeta): Promise<void> {
    const linked = await this.store.insertIdentity({
      id: newId(),
      user_id: user.id,
      provider: pending.provider,
      subject: pending.subject,
      email: pending.email,
      created_at: this.clock.now(),
    });
    const detail = { provider: pending.provider, subject: pending.subject };
    if (!linked) {
      // Another request linked the same identity between our lookup and this insert.
      await this.audit.record({
        userId: user.id,
        action: 'external.link',
        success: false,
        meta,
        detail: { ...detail, reason: 'linked_concurrently' },
      });
      throw new AppError('identity_conflict', 'this provider account is already linked to another user');
    }
    await this.audit.record({ userId: user.id, action: 'external.link', success: true, meta, detail });
  }

  private async createUser(pending: ExternalPendingTable): Promise<UserRow> {
    const now = this.clock.now();
    const user = newUserRow(
      {
        email: pending.email!,
        firstName: pending.first_name,
        lastName: pending.last_name,
        phone: null,
        passwordHash: null,
      },
      now,
    );
    const identity = {
      id: newId(),
      user_id: user.id,
      provider: pending.provider,
      subject: pending.subject,
      email: pending.email,
      created_at: now,
    };
    const outcome = await this.store.createUserWithIdentity(user, identity);
    if (outcome !== 'created')
      throw new AppError(
        'identity_conflict',
        'an account for this email or provider account was created at the same time; sign in again',
      );
    return user;
  }

  /** Issues the session (2FA still applies: a user with 2FA configured gets 2fa_required). */
  private async signIn(user: UserRow, detail: Record<string, unknown>, meta: RequestMeta): Promise<SessionResult> {
    const session = await this.auth.startSession(user);
    await this.audit.record({
      userId: user.id,
      action: 'external.login',
      success: true,
      meta,
      detail: { ...detail, status: session.status },
    });
    return session;
  }
}
