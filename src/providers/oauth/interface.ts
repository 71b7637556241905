// External sign-in through OpenID Connect (spec 4.5). One IdentityProvider per
// configured issuer; it is the only code that talks to that issuer.

/** Who the provider says the user is, read from a verified ID token (and userinfo when the token is thin). */
export interface ExternalIdentity {
  /** The provider's stable user id (`sub`). */
  subject: string;
  email: string | null;
  /** True only when the provider asserts `email_verified: true`. */
  emailVerified: boolean;
  firstName: string;
  lastName: string;
}

/** What must be kept between sending the browser to the provider and its callback. */
export interface AuthorizationStart {
  /** The provider's authorization URL (code flow, S256 PKCE, state, nonce). */
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

export interface IdentityProvider {
  readonly slug: string;
  readonly name: string;
  readonly issuer: string;
  /** Builds the authorization URL with fresh state, nonce and PKCE verifier. Throws provider_error when the issuer cannot be discovered. */
  startAuthorization(redirectUri: string): Promise<AuthorizationStart>;
  /**
   * Exchanges the code of a callback (the full callback URL, redirect_uri plus
   * query) with the PKCE verifier, checks the ID token (signature, iss, aud,
   * nonce) and returns the identity. Throws invalid_token when the provider
   * refuses the code, provider_error when it is unreachable or misbehaves.
   */
  finishAuthorization(
    callbackUrl: URL,
    expected: { state: string; nonce: string; codeVerifier: string },
  ): Promise<ExternalIdentity>;
}
