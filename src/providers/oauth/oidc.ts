// OpenID Connect through `openid-client` (certified RP library): discovery,
// authorization code flow with S256 PKCE, state and nonce, and ID token
// checks (signature against the issuer's JWKS, iss, aud, exp, nonce).
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../config.js';
import { AppError } from '../../http/errors.js';
import type { AuthorizationStart, ExternalIdentity, IdentityProvider } from './interface.js';

/** Seconds for each request to the provider (discovery, token, JWKS, userinfo). */
const REQUEST_TIMEOUT_SECONDS = 10;

type Claims = Record<string, unknown>;

const text = (value: unknown): string => (typeof value === 'string' ? value.trim() : '');

/** Names from given_name / family_name, else the first word of `name` and the rest. */
function namesOf(claims: Claims): { firstName: string; lastName: string } {
  const given = text(claims.given_name);
  const family = text(claims.family_name);
  if (given || family) return { firstName: given, lastName: family };
  const [first = '', ...rest] = text(claims.name).split(/\s+/);
  return { firstName: first, lastName: rest.join(' ') };
}

/** Turns anything openid-client throws into an AppError the API can answer with. */
function providerFailure(err: unknown, slug: string, step: string): AppError {
  if (err instanceof AppError) return err;
  // The provider answered with an OAuth error (e.g. invalid_grant: code reused, expired or PKCE mismatch).
  if (err instanceof client.ResponseBodyError && err.status < 500) {
    return new AppError(
      'invalid_token',
      `provider "${slug}" refused the ${step}: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
    );
  }
  if (err instanceof client.AuthorizationResponseError) {
    return new AppError(
      'provider_refused',
      `provider "${slug}" answered ${err.error}${err.error_description ? `: ${err.error_description}` : ''}`,
    );
  }
  const cause = err instanceof Error ? err.message : String(err);
  return new AppError('provider_error', `provider "${slug}" failed during ${step}: ${cause}`);
}

export class OidcIdentityProvider implements IdentityProvider {
  readonly slug: string;
  readonly name: string;
  readonly issuer: string;
  /** The discovered configuration, cached for the life of the process; a failed discovery is retried next time. */
  private discovered: Promise<client.Configuration> | null = null;

  constructor(private readonly config: OidcProviderConfig) {
    this.slug = config.slug;
    this.name = config.name;
    this.issuer = config.issuer;
  }

  private configuration(): Promise<client.Configuration> {
    if (!this.discovered) {
      this.discovered = this.discover().catch((err) => {
        this.discovered = null;
        throw providerFailure(err, this.slug, 'discovery');
      });
    }
    return this.discovered;
  }

  private async discover(): Promise<client.Configuration> {
    const issuer = new URL(this.config.issuer);
    // Plain http is accepted only because the operator configured an http issuer (local development and tests).
    const insecure = issuer.protocol === 'http:';
    const execute = insecure ? [client.allowInsecureRequests] : [];
    const options = { execute, timeout: REQUEST_TIMEOUT_SECONDS };
    const found = await client.discovery(
      issuer,
      this.config.clientId,
      undefined,
      client.ClientSecretBasic(this.config.clientSecret),
      options,
    );
    // RFC 8414: client_secret_basic is the default; switch to client_secret_post only for providers that list it alone.
    const methods = found.serverMetadata().token_endpoint_auth_methods_supported;
    if (methods && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
      const post = new client.Configuration(
        found.serverMetadata(),
        this.config.clientId,
        undefined,
        client.ClientSecretPost(this.config.clientSecret),
      );
      post.timeout = REQUEST_TIMEOUT_SECONDS;
      if (insecure) client.allowInsecureRequests(post);
      return post;
    }
    return found;
  }

  async startAuthorization(redirectUri: string): Promise<AuthorizationStart> {
    const configuration = await this.configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: this.config.scopes,
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url: url.href, state, nonce, codeVerifier };
  }

  async finishAuthorization(
    callbackUrl: URL,
    expected: { state: string; nonce: string; codeVerifier: string },
  ): Promise<ExternalIdentity> {
    const configuration = await this.configuration();
    let claims: Claims;
    let accessToken: string;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: expected.codeVerifier,
        expectedState: expected.state,
        expectedNonce: expected.nonce,
        idTokenExpected: true,
      });
      claims = { ...tokens.claims() };
      accessToken = tokens.access_token;
    } catch (err) {
      throw providerFailure(err, this.slug, 'authorization code');
    }
    const subject = text(claims.sub);
    if (!subject) throw new AppError('provider_error', `provider "${this.slug}" sent an ID token without sub`);
    // Some providers put only the essential claims in the ID token of the code
    // flow and the profile at the userinfo endpoint; fetch it then, bound to the same sub.
    if (claims.email === undefined && configuration.serverMetadata().userinfo_endpoint) {
      try {
        const info = await client.fetchUserInfo(configuration, accessToken, subject);
        claims = { ...info, ...claims };
      } catch (err) {
        throw providerFailure(err, this.slug, 'userinfo request');
      }
    }
    const email = text(claims.email).toLowerCase() || null;
    return {
      subject,
      email,
      emailVerified: email !== null && (claims.email_verified === true || claims.email_verified === 'true'),
      ...namesOf(claims),
    };
  }
}

/** One provider per configured issuer, by slug. */
export function createIdentityProviders(configs: OidcProviderConfig[]): Map<string, IdentityProvider> {
  return new Map(configs.map((c) => [c.slug, new OidcIdentityProvider(c)]));
}
