// Two-factor (TOTP) routes (spec 4.4). Set-up and reset need a phone-verified
// user who has passed 2FA where configured; verify is reachable with the
// limited token that login answers with 2fa_required.
import { Type } from 'typebox';
import { errorResponses, errorWith, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { TwoFactorService } from './two-factor-service.js';
import { AuthStatus } from './schemas.js';

const CodeBody = Type.Object(
  {
    token: Type.String({
      maxLength: 64,
      description: 'A 6-digit TOTP code, or (verify and reset only) an unused recovery code such as abcde-12345',
    }),
  },
  { examples: [{ token: '123456' }] },
);

const setupExample = {
  status: '2fa_setup' as const,
  otpauthUrl: 'otpauth://totp/Workspace:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Workspace',
  base32: 'JBSWY3DPEHPK3PXP',
};

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
        operationId: 'requestTwoFactorSetup',
        summary: 'Start TOTP set-up: a new secret to scan, confirmed with enable/submit',
        description: 'Answers 409 when 2FA is already configured: POST /api/auth/2fa/reset replaces the secret.',
        response: {
          200: ok(SetupResponse, 'A new secret, pending confirmation', setupExample),
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
        operationId: 'confirmTwoFactorSetup',
        summary: 'Confirm the pending secret with a code from it; turns 2FA on and issues recovery codes',
        description: 'Also confirms the new secret handed out by /api/auth/2fa/reset, which then replaces the old one.',
        body: CodeBody,
        response: {
          200: ok(EnableResponse, '2FA on; a re-issued session and the recovery codes', {
            status: 'ok',
            token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTkzNmIyZSJ9.c2lnbmF0dXJl',
            auth: {
              id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
              email: 'ada@example.com',
              firstName: 'Ada',
              lastName: 'Lovelace',
              phoneVerified: true,
              twoFactorPassed: true,
              twoFactorConfigured: true,
            },
            recoveryCodes: ['abcde-12345', 'fghij-67890'],
          }),
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
        operationId: 'verifyTwoFactor',
        summary: 'Pass 2FA after login answered 2fa_required, with a TOTP code or a recovery code',
        description: 'Answers a re-issued JWT with 2FA passed and writes the cookie; the limited token is revoked.',
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
        operationId: 'resetTwoFactor',
        summary: 'Replace the TOTP secret: checks a current code, answers a new secret to confirm with enable/submit',
        description: 'The current secret keeps working until the new one is confirmed, and the caller stays signed in.',
        body: CodeBody,
        response: {
          200: ok(SetupResponse, 'A new secret, pending confirmation', setupExample),
          ...errorResponses('invalid_code', 'two_factor_not_configured', 'rate_limited'),
        },
      },
    },
    async (request) => twoFactor.reset(request.auth!, request.body.token, metaOf(request)),
  );
}
