// What the OpenAPI document says of the routes in verification-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  requestPhoneVerification: {
    summary: 'Send a 6-digit verification code by SMS',
    description:
      'No body is needed (send none, or `{}`, to use the number on record; `{ phone }` sets a new one). The code expires after 10 minutes, allows 5 tries and is superseded by the next request. One code per number per minute (429 with Retry-After). 400 `no_phone` when there is no number on record and none is given; 502 `provider_error` when the SMS provider refuses.',
  },
  submitPhoneVerification: {
    summary: 'Confirm the SMS code; the phone becomes verified and a refreshed token is returned',
    description:
      'Errors: 400 `invalid_code`, `code_expired` or `too_many_attempts` (the code is dead after 5 tries). Writes the `token` cookie.',
  },
});

export const examples = {
  requestPhoneVerification: {
    status: 'sent' as const,
    phone: '+1415•••0123',
    expiresAt: '2026-11-23T12:10:00.000Z',
  },
  requestPhoneVerificationBody: { phone: '+14155550123' },
  submitPhoneVerificationBody: { code: '123456' },
};
