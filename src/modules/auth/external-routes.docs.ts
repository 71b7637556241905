// What the OpenAPI document says of the routes in external-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  listExternalProviders: {
    summary: 'The external sign-in providers configured on this server',
    description: 'Empty when no provider is configured (EXTERNAL_PROVIDERS). No credentials.',
  },
  getExternalProvider: {
    summary: 'Metadata of an external sign-in provider',
    description: 'The display name and OpenID Connect issuer of one configured provider. No credentials.',
  },
  startExternalSignIn: {
    summary: 'Start external sign-in: the authorization URL to send the browser to',
    description:
      "Authorization code flow with S256 PKCE, state and nonce; the flow expires after 10 minutes. The answer sets an HttpOnly cookie holding the flow's state, sent only to the callback: the flow completes only in the browser that called /init (call it from that browser with credentials, e.g. `fetch(url, { credentials: 'include' })`, or open it in the browser with `redirect=true`). When the caller is signed in (bearer token, API key or cookie), the provider is attached to their account instead. " +
      'With `returnTo` (its origin must be in RETURN_URL_ORIGINS) the browser comes back there with `externalToken` (complete it with GET /api/auth/external/register/{token}) or `error`; without it the callback answers the session JSON itself.',
  },
  externalSignInCallback: {
    summary: "The provider's callback (redirect_uri); not called by clients",
    description:
      "Needs the state cookie /init set in this browser: a callback opened in another browser is 400 `invalid_token` and the flow stays unused. Redirects (302) to the flow's returnTo with `externalToken` added, or `error` when the provider or the code exchange failed; without returnTo it completes the flow and answers like GET /api/auth/external/register/{token}.",
  },
  completeExternalSignIn: {
    summary: 'Complete external sign-in, sign-up or attach with the externalToken of the callback',
    description:
      'Single use, valid 10 minutes. A linked identity signs its user in; a flow started signed in attaches the provider (409 identity_conflict when it is linked to someone else); otherwise, when the provider did not verify the email, 400 email_not_verified; an existing account with the same email is never linked (409 account_exists: sign in to it, with its password, then attach the provider by calling /init from that session); otherwise a user is created without password or phone (status phone_not_verified: set a phone with POST /api/auth/verify/request).',
  },
});

export const examples = {
  listExternalProviders: [{ slug: 'google', name: 'Google' }],
  getExternalProvider: {
    slug: 'google',
    name: 'Google',
    issuer: 'https://accounts.google.com',
  },
  startExternalSignIn: {
    url: 'https://accounts.google.com/o/oauth2/v2/auth?client_id=abc&response_type=code&code_challenge_method=S256&state=xyz',
  },
};
