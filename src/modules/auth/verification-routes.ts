// Phone verification routes (spec 4.2). Both need a signed-in user whose
// phone is not necessarily verified yet.
import { Type } from 'typebox';
import { OPTIONAL_BODY, errorResponses, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { PhoneVerificationService } from './verification-service.js';

/** The body is optional: no body at all reads as {}. */
const VerifyRequestBody = Type.Object({
  phone: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 32,
      description:
        'International number to verify (e.g. +14155550123). It replaces the number on record once the code is confirmed. Omit to use the number on record.',
    }),
  ),
});

const VerificationSent = Type.Object({
  status: Type.Literal('sent'),
  phone: Type.String({ description: 'The number the code was sent to, masked', examples: ['+1415•••0123'] }),
  expiresAt: Type.String({ format: 'date-time', description: 'When the code stops working (10 minutes)' }),
});

const VerifySubmitBody = Type.Object({
  code: Type.String({ minLength: 1, maxLength: 32, description: 'The 6-digit code from the SMS' }),
});

export function verificationRoutes(app: App, phoneVerification: PhoneVerificationService, cookies: CookieSettings) {
  app.post(
    '/api/auth/verify/request',
    {
      config: { auth: 'user' },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: ['auth'],
        operationId: 'requestPhoneVerification',
        summary: 'Send a 6-digit verification code by SMS',
        description:
          'No body is needed (send none, or `{}`, to use the number on record; `{ phone }` sets a new one). The code expires after 10 minutes, allows 5 tries and is superseded by the next request. One code per number per minute (429 with Retry-After). 400 `no_phone` when there is no number on record and none is given; 502 `provider_error` when the SMS provider refuses.',
        body: Type.Object(VerifyRequestBody.properties, {
          examples: [{ phone: '+14155550123' }],
          [OPTIONAL_BODY]: true,
        }),
        response: {
          200: ok(VerificationSent, 'The code was sent', {
            status: 'sent',
            phone: '+1415•••0123',
            expiresAt: '2026-11-23T12:10:00.000Z',
          }),
          ...errorResponses('no_phone', 'provider_refused', 'rate_limited', 'provider_error'),
        },
      },
    },
    async (request) => phoneVerification.request(request.auth!, request.body, metaOf(request)),
  );

  app.post(
    '/api/auth/verify/submit',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['auth'],
        operationId: 'submitPhoneVerification',
        summary: 'Confirm the SMS code; the phone becomes verified and a refreshed token is returned',
        description:
          'Errors: 400 `invalid_code`, `code_expired` or `too_many_attempts` (the code is dead after 5 tries). Writes the `token` cookie.',
        body: Type.Object(VerifySubmitBody.properties, { examples: [{ code: '123456' }] }),
        response: {
          200: Type.Ref('LoginResponse', { description: 'Phone verified; the refreshed session' }),
          ...errorResponses('invalid_code', 'code_expired', 'too_many_attempts', 'rate_limited'),
        },
      },
    },
    async (request, reply) => {
      const session = await phoneVerification.submit(request.auth!, request.body, metaOf(request));
      writeSessionCookie(reply, cookies, session);
      return sessionBody(session);
    },
  );
}
