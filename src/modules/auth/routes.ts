// Session and sign-in routes (spec 4.1).
import { Type } from 'typebox';
import { credentialOf } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import { clearSessionCookie, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { Services } from '../../services.js';
import { AuthInfo, LoginBody, LoginFailure, LoginResponse, RegisterBody, StatusResponse } from './schemas.js';

export function authRoutes(app: App, services: Services) {
  const { auth, config } = services;
  app.addSchema(AuthInfo);
  app.addSchema(LoginResponse);
  app.addSchema(LoginFailure);

  app.get(
    '/api/auth',
    {
      config: { auth: 'any' },
      schema: { tags: ['auth'], summary: 'The signed-in user and their authentication status', response: { 200: StatusResponse, ...errors(401) } },
    },
    async (request) => auth.status(request.auth!),
  );

  app.post(
    '/api/auth/register',
    {
      schema: {
        tags: ['auth'],
        summary: 'Create an account; the phone is verified next (status phone_not_verified)',
        body: RegisterBody,
        response: { 200: Type.Ref('LoginResponse'), ...errors(400, 429) },
      },
    },
    async (request, reply) => {
      const session = await auth.register(request.body, metaOf(request));
      writeSessionCookie(reply, config, session);
      return sessionBody(session);
    },
  );

  app.post(
    '/api/auth/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign in with email and password',
        description: 'Outcomes: ok, phone_not_verified (cookie set), 2fa_required (limited token, no cookie), or 400 { status: error, message }.',
        body: LoginBody,
        response: { 200: Type.Ref('LoginResponse'), 400: Type.Ref('LoginFailure'), ...errors(429) },
      },
    },
    async (request, reply) => {
      try {
        const session = await auth.login(request.body, metaOf(request));
        writeSessionCookie(reply, config, session);
        return sessionBody(session);
      } catch (err) {
        if (err instanceof AppError && err.code === 'invalid_credentials') {
          return reply.status(400).send({ status: 'error' as const, message: err.message, code: err.code });
        }
        throw err;
      }
    },
  );

  app.get(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign out: the session token is revoked and the cookie cleared',
        security: [{ bearerAuth: [] }, { cookieAuth: [] }, {}],
        response: { 200: Type.Object({ status: Type.Literal('logout') }) },
      },
    },
    async (request, reply) => {
      const credential = credentialOf(request);
      const caller = credential ? await services.authenticator.authenticate(credential) : null;
      await auth.logout(caller, metaOf(request));
      clearSessionCookie(reply, config);
      return { status: 'logout' as const };
    },
  );
}
