// Phone verification routes (spec 4.2). Both need a signed-in user whose
// phone is not necessarily verified yet.
import { Type } from 'typebox';
import { OPTIONAL_BODY, errorResponses, ok } from '../../http/schemas.js';
import { type CookieSettings, sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { PhoneVerificationService } from './verification-service.js';
import { docs, examples } from './verification-routes.docs.js';

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
        ...docs.requestPhoneVerification,
        body: Type.Object(VerifyRequestBody.properties, {
          examples: [examples.requestPhoneVerificationBody],
          [OPTIONAL_BODY]: true,
        }),
        response: {
          200: ok(VerificationSent, 'The code was sent', examples.requestPhoneVerification),
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
        ...docs.submitPhoneVerification,
        body: Type.Object(VerifySubmitBody.properties, { examples: [examples.submitPhoneVerificationBody] }),
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
