// A real OpenID Connect provider (panva/oidc-provider) on 127.0.0.1 for the
// external sign-in tests, plus a scripted "browser" that walks its
// development login and consent pages with fetch and a cookie jar.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error oidc-provider ships no type declarations
import Provider from 'oidc-provider';

/** Claims of an account at the test provider; the account id is what is typed into the login form. */
export interface TestAccountClaims {
  email?: string;
  email_verified?: boolean;
  given_name?: string;
  family_name?: string;
}

export interface OidcTestServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Claims by account id; an account not listed gets `<id>@example.test`, verified, named Test User. */
  accounts: Map<string, TestAccountClaims>;
  /** Token endpoint calls seen (grant_type, code_verifier present), to prove PKCE was used. */
  tokenRequests: { grantType: string | null; codeVerifier: boolean }[];
  close(): Promise<void>;
}

export interface OidcTestServerOptions {
  /** The app's redirect URL, registered for the single client. */
  redirectUri: string;
  clientId?: string;
  clientSecret?: string;
  /**
   * true (default): email and profile claims are in the ID token, as with most
   * providers. false: the ID token holds only sub and the profile is served at
   * the userinfo endpoint (oidc-provider's conformIdTokenClaims).
   */
  claimsInIdToken?: boolean;
}

export async function startOidcServer(options: OidcTestServerOptions): Promise<OidcTestServer> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = options.clientId ?? 'workspace-test';
  const clientSecret = options.clientSecret ?? randomBytes(24).toString('hex');
  const accounts = new Map<string, TestAccountClaims>();
  const tokenRequests: OidcTestServer['tokenRequests'] = [];
  const signingKey = {
    ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    use: 'sig',
    alg: 'RS256',
    kid: 'test',
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      return {
        accountId: id,
        async claims() {
          const claims = accounts.get(id) ?? {
            email: `${id}@example.test`,
            email_verified: true,
            given_name: 'Test',
            family_name: 'User',
          };
          return { sub: id, ...claims };
        },
      };
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    conformIdTokenClaims: options.claimsInIdToken === false,
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, IdToken: 3600, Interaction: 3600, Session: 3600 },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    jwks: { keys: [signingKey] },
  });
  provider.on('grant.success', (ctx: { oidc: { params?: Record<string, unknown> } }) => {
    const params = ctx.oidc.params ?? {};
    tokenRequests.push({
      grantType: typeof params.grant_type === 'string' ? params.grant_type : null,
      codeVerifier: typeof params.code_verifier === 'string',
    });
  });
  server.on('request', provider.callback());

  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    tokenRequests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** Cookies by name; sent on every request to the provider (its paths are all on one origin). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * Plays the browser: opens the authorization URL, signs in as `login` on the
 * development login page (or cancels when `deny`), confirms consent, and
 * returns the callback URL the provider redirects to (never requested: the
 * test hands its query to the app with inject()).
 */
export async function signInAtProvider(
  authorizationUrl: string,
  options: { login: string; redirectUri: string; deny?: boolean },
): Promise<URL> {
  const jar = new CookieJar();
  let next: { url: string; method: 'GET' | 'POST'; body?: URLSearchParams } = { url: authorizationUrl, method: 'GET' };
  for (let step = 0; step < 20; step++) {
    if (next.url.startsWith(options.redirectUri)) return new URL(next.url);
    const res = await fetch(next.url, {
      method: next.method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(next.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body: next.body,
    });
    jar.store(res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      next = { url: new URL(location, next.url).href, method: 'GET' };
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`provider answered ${res.status} at ${next.url}: ${html.slice(0, 500)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`unexpected page at ${next.url}: ${html.slice(0, 500)}`);
    const submitUrl = new URL(action.replace(/&amp;/g, '&'), next.url).href;
    if (options.deny) {
      next = { url: `${submitUrl}/abort`, method: 'GET' };
    } else if (prompt === 'login') {
      next = {
        url: submitUrl,
        method: 'POST',
        body: new URLSearchParams({ prompt: 'login', login: options.login, password: 'any password' }),
      };
    } else {
      next = { url: submitUrl, method: 'POST', body: new URLSearchParams({ prompt }) };
    }
  }
  throw new Error('too many steps at the provider');
}
