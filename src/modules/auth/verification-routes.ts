// Phone verification routes (spec 4.2). Both need a signed-in user whose
// phone is not necessarily verified yet.
import { Type } from 'typebox';
import { errors } from '../../http/schemas.js';
import { sessionBody, writeSessionCookie } from '../../http/session-cookie.js';
import { type App, metaOf } from '../../http/types.js';
import type { Services } from '../../services.js';

/** The body is optional: no body at all reads as {}. */
const VerifyRequestBody = Type.Object({
  phone: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'International number to verify (e.g. +14155550123). It replaces the number on record once the code is confirmed. Omit to use the number on record.',
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

export function verificationRoutes(app: App, services: Services) {
  const { phoneVerification, config } = services;

  app.post(
    '/api/auth/verify/request',
    {
      config: { auth: 'user' },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags: ['auth'],
        summary: 'Send a 6-digit verification code by SMS',
        description:
          'The body is optional. The code expires after 10 minutes, allows 5 tries and is superseded by the next request. One code per number per minute (429 with Retry-After). 400 `no_phone` when there is no number on record and none is given; 502 `provider_error` when the SMS provider refuses.',
        body: VerifyRequestBody,
        response: { 200: VerificationSent, ...errors(400, 401, 403, 429, 502) },
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
        summary: 'Confirm the SMS code; the phone becomes verified and a refreshed token is returned',
        description: 'Errors: 400 `invalid_code`, `code_expired` or `too_many_attempts` (the code is dead after 5 tries). Writes the `token` cookie.',
        body: VerifySubmitBody,
        response: { 200: Type.Ref('LoginResponse'), ...errors(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const session = await phoneVerification.submit(request.auth!, request.body, metaOf(request));
      writeSessionCookie(reply, config, session);
      return sessionBody(session);
    },
  );
}
