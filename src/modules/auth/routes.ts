// Session and sign-in routes (spec 4.1).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { type Authenticator, credentialOf } from '../../http/auth.js';
import { AppError } from '../../http/errors.js';
import { errorResponses, ok } from '../../http/schemas.js';
import {
  type CookieSettings,
  clearSessionCookie,
  sessionBody,
  sessionCookieFromAnotherSite,
  writeSessionCookie,
} from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { BackgroundMail } from './account-mail.js';
import { externalRoutes } from './external-routes.js';
import type { ExternalSignInService } from './external-service.js';
import { resetRoutes } from './reset-routes.js';
import type { PasswordResetService } from './reset-service.js';
import type { AuthService } from './service.js';
import { twoFactorRoutes } from './two-factor-routes.js';
import type { TwoFactorService } from './two-factor-service.js';
import { verificationRoutes } from './verification-routes.js';
import type { PhoneVerificationService } from './verification-service.js';
import { AuthInfo, LoginBody, LoginFailure, LoginResponse, RegisterBody, StatusResponse } from './schemas.js';
import { docs, examples } from './routes.docs.js';

/** What the auth area's routes touch: its services, the authenticator (sign-out and external sign-in read the caller), and the cookie settings. */
export interface AuthRouteDeps {
  auth: AuthService;
  accountMail: BackgroundMail;
  authenticator: Authenticator;
  phoneVerification: PhoneVerificationService;
  passwordReset: PasswordResetService;
  twoFactor: TwoFactorService;
  externalSignIn: ExternalSignInService;
  cookies: CookieSettings;
}

/** Sign-up and sign-in, then phone verification, password reset, two-factor and external sign-in (in this order in the OpenAPI document). */
export function authRoutes(app: App, deps: AuthRouteDeps) {
  accountRoutes(app, deps);
  verificationRoutes(app, deps.phoneVerification, deps.cookies);
  resetRoutes(app, deps.passwordReset, deps.cookies);
  twoFactorRoutes(app, deps.twoFactor, deps.cookies);
  externalRoutes(app, deps.externalSignIn, deps.authenticator, deps.cookies);
}

function accountRoutes(app: App, deps: AuthRouteDeps) {
  const { auth, cookies } = deps;
  app.addHook('onClose', () => deps.accountMail.drain());
  app.addSchema(AuthInfo);
  app.addSchema(LoginResponse);
  app.addSchema(LoginFailure);

  app.get(
    '/api/auth',
    {
      config: { auth: 'any' },
      schema: {
        tags: ['auth'],
        ...docs.getAuthStatus,
        response: {
          200: ok(StatusResponse, 'The caller and their status', examples.getAuthStatus),
        },
      },
    },
    async (request) => auth.status(request.auth!),
  );

  app.post(
    '/api/auth/register',
    {
      schema: {
        tags: ['auth'],
        ...docs.register,
        body: RegisterBody,
        response: {
          200: Type.Ref('LoginResponse', {
            description: 'Signed in, phone not verified yet',
            examples: [examples.register],
          }),
          ...errorResponses('passwords_mismatch', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const { session, notice } = await auth.register(request.body, metaOf(request));
      notice.catch((err) => request.log.error({ err }, 'sign-up notice email could not be sent'));
      writeSessionCookie(reply, cookies, session);
      return sessionBody(session);
    },
  );

  app.post(
    '/api/auth/login',
    {
      schema: {
        tags: ['auth'],
        ...docs.login,
        body: LoginBody,
        response: {
          200: Type.Ref('LoginResponse', { description: 'Signed in (or two-factor verification pending)' }),
          400: Type.Ref('LoginFailure', {
            examples: [examples.login],
          }),
          ...errorResponses('rate_limited'),
        },
      },
    },
    async (request, reply) => {
      try {
        const session = await auth.login(request.body, metaOf(request));
        writeSessionCookie(reply, cookies, session);
        return sessionBody(session);
      } catch (err) {
        if (err instanceof AppError && err.code === 'invalid_credentials') {
          return reply.status(400).send({ status: 'error' as const, message: err.message, code: err.code });
        }
        throw err;
      }
    },
  );

  const LogoutAnswer = ok(
    Type.Object({ status: Type.Literal('logout') }),
    'Signed out (or there was nobody to sign out)',
    examples.logout,
  );
  const logout = async (request: FastifyRequest, reply: FastifyReply) => {
    if (sessionCookieFromAnotherSite(request, cookies)) {
      throw new AppError(
        'forbidden',
        'a sign-out sent from another site is refused: sign out with POST /api/auth/logout from the console itself, or send the token as Authorization: Bearer',
      );
    }
    const credential = credentialOf(request);
    const caller = credential ? await deps.authenticator.authenticate(credential) : null;
    await auth.logout(caller, metaOf(request));
    clearSessionCookie(reply, cookies);
    return { status: 'logout' as const };
  };

  app.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        ...docs.postLogout,
        security: [{ bearerAuth: [] }, { cookieAuth: [] }, {}],
        response: { 200: LogoutAnswer, ...errorResponses('forbidden') },
      },
    },
    logout,
  );

  app.get(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        ...docs.logout,
        security: [{ bearerAuth: [] }, { cookieAuth: [] }, {}],
        response: { 200: LogoutAnswer, ...errorResponses('forbidden') },
      },
    },
    logout,
  );
}
