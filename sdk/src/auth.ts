// Account access (spec 4.1–4.6): every call that signs in hands its token to
// the client, which sends it from then on.
import type { Answer, Body, Query } from './api-types.js';
import type { HttpCore } from './http.js';

export type Session = Answer<'/api/auth/login', 'post'>;
export type RegisterInput = Body<'/api/auth/register', 'post'>;
export type LoginInput = Omit<Body<'/api/auth/login', 'post'>, 'remember'> & { remember?: boolean };

export class AuthApi {
  readonly twoFactor: TwoFactorApi;
  readonly external: ExternalApi;

  constructor(private readonly http: HttpCore) {
    this.twoFactor = new TwoFactorApi(http, (s) => this.keep(s));
    this.external = new ExternalApi(http, (s) => this.keep(s));
  }

  /** Keeps the token of a sign-in answer for the calls that follow. */
  keep<S extends { token: string }>(session: S): S {
    this.http.token = session.token;
    return session;
  }

  /** The signed-in user and their status (ok, phone_not_verified, 2fa_required). */
  status(): Promise<Answer<'/api/auth', 'get'>> {
    return this.http.request('get', '/api/auth', {});
  }

  /** Creates an account; the answer's token (status phone_not_verified) is kept. */
  async register(input: RegisterInput): Promise<Session> {
    return this.keep(await this.http.request('post', '/api/auth/register', { body: input }));
  }

  /**
   * Signs in. Refused credentials throw WorkspaceApiError (code invalid_credentials).
   * Status 2fa_required keeps a limited token: finish with twoFactor.verify(code).
   */
  async login(input: LoginInput): Promise<Session> {
    return this.keep(
      await this.http.request('post', '/api/auth/login', { body: { ...input, remember: input.remember ?? false } }),
    );
  }

  /** Revokes the session token and forgets it (an API key in use is kept: delete it with apiKeys.delete). */
  async logout(): Promise<Answer<'/api/auth/logout', 'get'>> {
    const answer = await this.http.request('get', '/api/auth/logout', {});
    if (this.http.token && !this.http.token.startsWith('wsk_')) this.http.token = null;
    return answer;
  }

  /** Sends a 6-digit code by SMS to the number on record, or to `phone`, which replaces it once confirmed. */
  requestPhoneVerification(
    input: Body<'/api/auth/verify/request', 'post'> = {},
  ): Promise<Answer<'/api/auth/verify/request', 'post'>> {
    return this.http.request('post', '/api/auth/verify/request', { body: input });
  }

  /** Confirms the SMS code; the refreshed token (status ok) is kept. */
  async submitPhoneVerification(code: string): Promise<Session> {
    return this.keep(await this.http.request('post', '/api/auth/verify/submit', { body: { code } }));
  }

  requestPasswordReset(
    input: Body<'/api/auth/reset-password/request', 'post'>,
  ): Promise<Answer<'/api/auth/reset-password/request', 'post'>> {
    return this.http.request('post', '/api/auth/reset-password/request', { body: input });
  }

  /** Sets the new password with the emailed token and signs in; the token is kept. */
  async submitPasswordReset(input: Body<'/api/auth/reset-password/submit', 'post'>): Promise<Session> {
    return this.keep(await this.http.request('post', '/api/auth/reset-password/submit', { body: input }));
  }
}

export class TwoFactorApi {
  constructor(
    private readonly http: HttpCore,
    private readonly keep: <S extends { token: string }>(session: S) => S,
  ) {}

  /** A new TOTP secret (otpauthUrl, base32) to confirm with enableSubmit. */
  enableRequest(): Promise<Answer<'/api/auth/2fa/enable/request', 'post'>> {
    return this.http.request('post', '/api/auth/2fa/enable/request', {});
  }

  /** Turns 2FA on with a code from the new secret; answers recovery codes and a re-issued token, which is kept. */
  async enableSubmit(code: string): Promise<Answer<'/api/auth/2fa/enable/submit', 'post'>> {
    return this.keep(await this.http.request('post', '/api/auth/2fa/enable/submit', { body: { token: code } }));
  }

  /** Passes 2FA after login answered 2fa_required (TOTP or recovery code); the full token is kept. */
  async verify(code: string): Promise<Session> {
    return this.keep(await this.http.request('post', '/api/auth/2fa/verify', { body: { token: code } }));
  }

  /** Starts replacing the secret (checked with a current code); confirm with enableSubmit. */
  reset(code: string): Promise<Answer<'/api/auth/2fa/reset', 'post'>> {
    return this.http.request('post', '/api/auth/2fa/reset', { body: { token: code } });
  }
}

export class ExternalApi {
  constructor(
    private readonly http: HttpCore,
    private readonly keep: <S extends { token: string }>(session: S) => S,
  ) {}

  providers(): Promise<Answer<'/api/auth/external/providers', 'get'>> {
    return this.http.request('get', '/api/auth/external/providers', {});
  }

  provider(slug: string): Promise<Answer<'/api/auth/external/{provider}', 'get'>> {
    return this.http.request('get', '/api/auth/external/{provider}', { params: { provider: slug } });
  }

  /**
   * The authorization URL to send the browser to. The answer also sets the flow's state cookie,
   * which the callback requires: call this from the browser that will finish the flow, with
   * `credentials: 'include'` when the API is on another origin (or open /init?redirect=true in it).
   */
  init(
    slug: string,
    query: Query<'/api/auth/external/{provider}/init', 'get'> = {},
  ): Promise<Answer<'/api/auth/external/{provider}/init', 'get'>> {
    return this.http.request('get', '/api/auth/external/{provider}/init', { params: { provider: slug }, query });
  }

  /** Completes sign-in, sign-up or attach with the registration token of the callback; the token is kept. */
  async complete(registrationToken: string): Promise<Session> {
    return this.keep(
      await this.http.request('get', '/api/auth/external/register/{token}', { params: { token: registrationToken } }),
    );
  }
}

export class ApiKeysApi {
  constructor(private readonly http: HttpCore) {}

  list(): Promise<Answer<'/api/api-keys', 'get'>> {
    return this.http.request('get', '/api/api-keys', {});
  }

  /** The answer's `key` is the clear API key, shown this once. */
  create(name: string): Promise<Answer<'/api/api-keys', 'put'>> {
    return this.http.request('put', '/api/api-keys', { body: { name } });
  }

  delete(id: string): Promise<void> {
    return this.http.request('delete', '/api/api-keys/{id}', { params: { id } });
  }
}
