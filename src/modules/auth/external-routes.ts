// External identity providers (spec 4.5): OpenID Connect sign-in, sign-up and attach.
import { Type } from 'typebox';
import { type Authenticator, credentialOf } from '../../http/auth.js';
import { errorResponses, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import { EXTERNAL_FLOW_TTL_MS, type ExternalSignInService } from './external-service.js';
import { docs, examples } from './external-routes.docs.js';

/**
 * The cookie that binds a flow to the browser that started it: the flow's
 * state, HttpOnly, sent only to that provider's callback. SameSite=Lax is
 * enough: the provider sends the browser back with a top-level GET.
 */
const stateCookieName = (slug: string) => `external_state_${slug.replace(/[^A-Za-z0-9_-]/g, '_')}`;
const stateCookieOptions = (config: CookieSettings, slug: string) => ({
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: config.publicUrl.startsWith('https:'),
  path: `/api/auth/external/${encodeURIComponent(slug)}/redirect`,
});

const ProviderParams = Type.Object({
  provider: Type.String({ minLength: 1, maxLength: 64, description: 'Provider slug' }),
});

const ProviderSummary = Type.Object({
  slug: Type.String({ description: 'Names the provider in the other /api/auth/external routes' }),
  name: Type.String({ description: 'Display name' }),
});

const ProviderMetadata = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  issuer: Type.String({ format: 'uri', description: 'OpenID Connect issuer' }),
});

export function externalRoutes(
  app: App,
  externalSignIn: ExternalSignInService,
  authenticator: Authenticator,
  cookies: CookieSettings,
) {
  app.get(
    '/api/auth/external/providers',
    {
      schema: {
        tags: ['auth'],
        ...docs.listExternalProviders,
        response: { 200: ok(Type.Array(ProviderSummary), 'The providers', examples.listExternalProviders) },
      },
    },
    async () => externalSignIn.listProviders(),
  );

  app.get(
    '/api/auth/external/:provider',
    {
      schema: {
        tags: ['auth'],
        ...docs.getExternalProvider,
        params: ProviderParams,
        response: {
          200: ok(ProviderMetadata, 'The provider', examples.getExternalProvider),
          ...errorResponses('provider_not_found'),
        },
      },
    },
    async (request) => externalSignIn.describe(request.params.provider),
  );

  app.get(
    '/api/auth/external/:provider/init',
    {
      schema: {
        tags: ['auth'],
        ...docs.startExternalSignIn,
        security: [{ bearerAuth: [] }, { cookieAuth: [] }, {}],
        params: ProviderParams,
        querystring: Type.Object({
          returnTo: Type.Optional(Type.String({ maxLength: 2048, description: 'Absolute URL on an allowed origin' })),
          redirect: Type.Optional(
            Type.Boolean({
              description:
                'true: answer 302 to the provider instead of JSON, so the browser can open /init itself (top-level navigation). Use it when the app runs on another site than this API: browsers do not keep cookies set by cross-site fetch answers.',
            }),
          ),
        }),
        response: {
          200: ok(
            Type.Object({ url: Type.String({ format: 'uri' }) }),
            'Where to send the browser',
            examples.startExternalSignIn,
          ),
          302: Type.Null({ description: 'With redirect=true: to the provider' }),
          ...errorResponses(
            'invalid_return_url',
            'two_factor_required',
            'provider_not_found',
            'rate_limited',
            'provider_error',
          ),
        },
      },
    },
    async (request, reply) => {
      const credential = credentialOf(request);
      const caller = credential ? await authenticator.authenticate(credential) : null;
      reply.header('cache-control', 'no-store');
      const { provider } = request.params;
      const started = await externalSignIn.init(
        provider,
        { returnTo: request.query.returnTo, caller },
        metaOf(request),
      );
      reply.setCookie(stateCookieName(provider), started.state, {
        ...stateCookieOptions(cookies, provider),
        maxAge: EXTERNAL_FLOW_TTL_MS / 1000,
      });
      if (request.query.redirect) return reply.redirect(started.url, 302);
      return { url: started.url };
    },
  );

  app.get(
    '/api/auth/external/:provider/redirect',
    {
      schema: {
        tags: ['auth'],
        ...docs.externalSignInCallback,
        querystring: Type.Object(
          {
            state: Type.Optional(Type.String({ maxLength: 512 })),
            code: Type.Optional(Type.String({ maxLength: 4096 })),
            error: Type.Optional(Type.String({ maxLength: 256 })),
            error_description: Type.Optional(Type.String({ maxLength: 2048 })),
          },
          { additionalProperties: true },
        ),
        params: ProviderParams,
        response: {
          200: Type.Ref('LoginResponse', { description: 'Signed in (flows started without returnTo)' }),
          302: Type.Null({ description: 'To returnTo with externalToken or error in its query' }),
          ...errorResponses(
            'invalid_token',
            'provider_refused',
            'email_not_verified',
            'provider_not_found',
            'identity_conflict',
            'account_exists',
            'provider_error',
          ),
        },
      },
    },
    async (request, reply) => {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      const { provider } = request.params;
      const outcome = await externalSignIn.handleCallback(
        provider,
        query,
        request.cookies[stateCookieName(provider)],
        metaOf(request),
      );
      reply.header('cache-control', 'no-store');
      reply.clearCookie(stateCookieName(provider), stateCookieOptions(cookies, provider));
      if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302);
      writeSessionCookie(reply, cookies, outcome.session);
      return sessionBody(outcome.session);
    },
  );

  app.get(
    '/api/auth/external/register/:token',
    {
      schema: {
        tags: ['auth'],
        ...docs.completeExternalSignIn,
        params: Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: {
          200: Type.Ref('LoginResponse', { description: 'Signed in, signed up or attached' }),
          ...errorResponses(
            'invalid_token',
            'provider_refused',
            'email_not_verified',
            'identity_conflict',
            'account_exists',
          ),
        },
      },
    },
    async (request, reply) => {
      const session = await externalSignIn.complete(request.params.token, metaOf(request));
      reply.header('cache-control', 'no-store');
      writeSessionCookie(reply, cookies, session);
      return sessionBody(session);
    },
  );
}
