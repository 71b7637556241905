// Password reset routes (spec 4.3). No credentials: the emailed token is the proof.
import { Type } from 'typebox';
import { Email, errorResponses, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { PasswordResetService } from './reset-service.js';
import { docs, examples } from './reset-routes.docs.js';

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
        ...docs.requestPasswordReset,
        body: Type.Object(ResetRequestBody.properties, {
          examples: [examples.requestPasswordResetBody],
        }),
        response: {
          200: ok(ResetRequested, 'Requested (whether or not the account exists)', examples.requestPasswordReset),
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
        ...docs.submitPasswordReset,
        body: Type.Object(ResetSubmitBody.properties, {
          examples: [examples.submitPasswordResetBody],
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
