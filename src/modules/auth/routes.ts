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
        operationId: 'getAuthStatus',
        summary: 'The signed-in user and their authentication status',
        description:
          'Works with any valid credential, even while two-factor verification is pending, so a client can tell what the user must do next (`status`).',
        response: {
          200: ok(StatusResponse, 'The caller and their status', {
            status: 'ok',
            auth: {
              id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
              email: 'ada@example.com',
              firstName: 'Ada',
              lastName: 'Lovelace',
              phoneVerified: true,
              twoFactorPassed: false,
              twoFactorConfigured: false,
            },
          }),
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
        operationId: 'register',
        summary: 'Create an account; the phone is verified next (status phone_not_verified)',
        description:
          'Creates the account and signs it in (the `token` cookie is written). The answer has status `phone_not_verified`: POST /api/auth/verify/request next. Rate limited per IP. ' +
          'It does not tell whether an email has an account: for an email that already has one the answer looks the same (status 200, same fields, cookie), but nothing is created, its token authenticates nobody (401 on use), and the owner of the email is told by email that someone tried to sign up. Someone who already has an account signs in or resets the password instead.',
        body: RegisterBody,
        response: {
          200: Type.Ref('LoginResponse', {
            description: 'Signed in, phone not verified yet',
            examples: [
              {
                status: 'phone_not_verified',
                token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ2ZXIiOjAsInN1YiI6IjAxOTM2YjJlIn0.c2lnbmF0dXJl',
                auth: {
                  id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
                  email: 'ada@example.com',
                  firstName: 'Ada',
                  lastName: 'Lovelace',
                  phoneVerified: false,
                  twoFactorPassed: false,
                  twoFactorConfigured: false,
                },
              },
            ],
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
        operationId: 'login',
        summary: 'Sign in with email and password',
        description:
          'Outcomes: ok, phone_not_verified (cookie set), 2fa_required (limited token, no cookie: POST /api/auth/2fa/verify next), or 400 { status: error, message, code: invalid_credentials }. Wrong email and wrong password answer alike. Rate limited per IP and per account.',
        body: LoginBody,
        response: {
          200: Type.Ref('LoginResponse', { description: 'Signed in (or two-factor verification pending)' }),
          400: Type.Ref('LoginFailure', {
            examples: [{ status: 'error', message: 'invalid email or password', code: 'invalid_credentials' }],
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
    { status: 'logout' },
  );
  const logoutDescription =
    'Credentials are optional: without a valid one it only clears the cookie, and answers 200 alike. ' +
    "A request whose credential is the session cookie (no Authorization header) and that a browser sends from another site (`Sec-Fetch-Site: cross-site` or `same-site`, or an Origin other than the server's) is refused with 403 `forbidden`: the session stays and the cookie is kept, so a link or form on another site cannot sign a console user out.";
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
        operationId: 'postLogout',
        summary: 'Sign out (POST): the session token is revoked and the cookie cleared',
        description: `An addition to the spec, the form to use: signing out changes state, so browsers should send it as POST (GET /api/auth/logout is the spec's form and answers the same). No body. ${logoutDescription}`,
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
        operationId: 'logout',
        summary: 'Sign out: the session token is revoked and the cookie cleared',
        description: `The spec's form; POST /api/auth/logout answers the same and is the one for browsers. ${logoutDescription}`,
        security: [{ bearerAuth: [] }, { cookieAuth: [] }, {}],
        response: { 200: LogoutAnswer, ...errorResponses('forbidden') },
      },
    },
    logout,
  );
}
