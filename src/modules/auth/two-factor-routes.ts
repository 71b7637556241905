// Two-factor (TOTP) routes (spec 4.4). Set-up and reset need a phone-verified
// user who has passed 2FA where configured; verify is reachable with the
// limited token that login answers with 2fa_required.
import { Type } from 'typebox';
import { errorResponses, errorWith, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { TwoFactorService } from './two-factor-service.js';
import { AuthStatus } from './schemas.js';
import { docs, examples } from './two-factor-routes.docs.js';

const CodeBody = Type.Object(
  {
    token: Type.String({
      maxLength: 64,
      description: 'A 6-digit TOTP code, or (verify and reset only) an unused recovery code such as abcde-12345',
    }),
  },
  { examples: [examples.codeBody] },
);

const SetupResponse = Type.Object({
  status: Type.Literal('2fa_setup'),
  otpauthUrl: Type.String({
    description: 'otpauth://totp/… URL for a QR code (issuer Workspace, SHA1, 6 digits, 30 s)',
  }),
  base32: Type.String({ description: 'The secret in Base32, for manual entry' }),
});

const EnableResponse = Type.Object({
  status: AuthStatus,
  token: Type.String({
    description: 'Re-issued JWT with 2FA passed; also written to the `token` cookie. The calling token is revoked.',
  }),
  auth: Type.Ref('AuthInfo'),
  recoveryCodes: Type.Array(Type.String(), {
    description: 'Ten single-use recovery codes, shown only here; they replace any earlier ones',
  }),
});

export function twoFactorRoutes(app: App, twoFactor: TwoFactorService, cookies: CookieSettings) {
  app.post(
    '/api/auth/2fa/enable/request',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['auth'],
        ...docs.requestTwoFactorSetup,
        response: {
          200: ok(SetupResponse, 'A new secret, pending confirmation', examples.setup),
          ...errorResponses(
            errorWith('conflict', {
              reset: {
                schema: {
                  type: 'string',
                  description: 'Two-factor authentication is configured already: the route that replaces its secret',
                },
                example: '/api/auth/2fa/reset',
              },
            }),
          ),
        },
      },
    },
    async (request) => twoFactor.requestEnable(request.auth!, metaOf(request)),
  );

  app.post(
    '/api/auth/2fa/enable/submit',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['auth'],
        ...docs.confirmTwoFactorSetup,
        body: CodeBody,
        response: {
          200: ok(EnableResponse, '2FA on; a re-issued session and the recovery codes', examples.confirmTwoFactorSetup),
          ...errorResponses('invalid_code', 'two_factor_setup_missing', 'conflict', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const { session, recoveryCodes } = await twoFactor.confirmEnable(
        request.auth!,
        request.body.token,
        metaOf(request),
      );
      writeSessionCookie(reply, cookies, session);
      return { ...sessionBody(session), recoveryCodes };
    },
  );

  app.post(
    '/api/auth/2fa/verify',
    {
      config: { auth: 'any' },
      schema: {
        tags: ['auth'],
        ...docs.verifyTwoFactor,
        body: CodeBody,
        response: {
          200: Type.Ref('LoginResponse', { description: 'Two-factor verification passed; the full session' }),
          ...errorResponses('invalid_code', 'two_factor_not_configured', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const session = await twoFactor.verify(request.auth!, request.body.token, metaOf(request));
      writeSessionCookie(reply, cookies, session);
      return sessionBody(session);
    },
  );

  app.post(
    '/api/auth/2fa/reset',
    {
      config: { auth: 'verified' },
      schema: {
        tags: ['auth'],
        ...docs.resetTwoFactor,
        body: CodeBody,
        response: {
          200: ok(SetupResponse, 'A new secret, pending confirmation', examples.setup),
          ...errorResponses('invalid_code', 'two_factor_not_configured', 'rate_limited'),
        },
      },
    },
    async (request) => twoFactor.reset(request.auth!, request.body.token, metaOf(request)),
  );
}
