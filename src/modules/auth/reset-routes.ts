// Password reset routes (spec 4.3). No credentials: the emailed token is the proof.
import { Type } from 'typebox';
import { Email, errorResponses, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { PasswordResetService } from './reset-service.js';

const ResetRequestBody = Type.Object({
  email: Email,
  returnUrl: Type.Optional(
    Type.String({
      maxLength: 2048,
      description:
        'Page the emailed link opens, with ?token=… appended; its origin must be in RETURN_URL_ORIGINS. Default PUBLIC_URL/reset-password.',
    }),
  ),
});

const ResetRequested = Type.Object({
  status: Type.Literal('requested'),
  message: Type.String(),
});

const ResetSubmitBody = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 512, description: 'The token from the emailed link' }),
  password: Type.String({ maxLength: 1024 }),
  confirmPassword: Type.String({ maxLength: 1024 }),
});

export function resetRoutes(app: App, passwordReset: PasswordResetService, cookies: CookieSettings) {
  app.addHook('onClose', () => passwordReset.drain());

  app.post(
    '/api/auth/reset-password/request',
    {
      schema: {
        tags: ['auth'],
        operationId: 'requestPasswordReset',
        summary: 'Email a single-use password reset link (valid 30 minutes)',
        description:
          'Answers the same whether or not the email has an account. 400 `invalid_return_url` when returnUrl points outside the allowed origins; 429 when rate limited (per IP and per email).',
        body: Type.Object(ResetRequestBody.properties, {
          examples: [{ email: 'ada@example.com', returnUrl: 'http://localhost:3000/reset-password' }],
        }),
        response: {
          200: ok(ResetRequested, 'Requested (whether or not the account exists)', {
            status: 'requested',
            message: 'if an account exists for this email, a reset link has been sent',
          }),
          ...errorResponses('invalid_return_url', 'rate_limited'),
        },
      },
    },
    async (request) => {
      const { answer, delivery } = await passwordReset.request(request.body, metaOf(request));
      delivery.catch((err) => request.log.error({ err }, 'password reset email could not be sent'));
      return answer;
    },
  );

  app.post(
    '/api/auth/reset-password/submit',
    {
      schema: {
        tags: ['auth'],
        operationId: 'submitPasswordReset',
        summary:
          'Set a new password with the emailed token; ends every other session, deletes every API key and signs in',
        description:
          'Every earlier session of the account ends (401) and every API key of the account is deleted, in the same transaction as the new password: a reset is what an owner does when a credential may be in other hands. Create new keys afterwards. Errors: 400 `invalid_token` (unknown, used or expired), `invalid_input` / `passwords_mismatch` for the password. A user with 2FA gets status 2fa_required and a limited token (no cookie).',
        body: Type.Object(ResetSubmitBody.properties, {
          examples: [
            {
              token: 'q8Xr2mZ0bWQ4YjU1NDRkZTQ',
              password: 'correct horse battery staple',
              confirmPassword: 'correct horse battery staple',
            },
          ],
        }),
        response: {
          200: Type.Ref('LoginResponse', { description: 'Password changed; signed in' }),
          ...errorResponses('invalid_token', 'passwords_mismatch', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const session = await passwordReset.submit(request.body, metaOf(request));
      writeSessionCookie(reply, cookies, session);
      return sessionBody(session);
    },
  );
}
