// What the OpenAPI document says of the routes in reset-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  requestPasswordReset: {
    summary: 'Email a single-use password reset link (valid 30 minutes)',
    description:
      'Answers the same whether or not the email has an account. 400 `invalid_return_url` when returnUrl points outside the allowed origins; 429 when rate limited (per IP and per email).',
  },
  submitPasswordReset: {
    summary: 'Set a new password with the emailed token; ends every other session, deletes every API key and signs in',
    description:
      'Every earlier session of the account ends (401) and every API key of the account is deleted, in the same transaction as the new password: a reset is what an owner does when a credential may be in other hands. Create new keys afterwards. Errors: 400 `invalid_token` (unknown, used or expired), `invalid_input` / `passwords_mismatch` for the password. A user with 2FA gets status 2fa_required and a limited token (no cookie).',
  },
});

export const examples = {
  requestPasswordReset: {
    status: 'requested' as const,
    message: 'if an account exists for this email, a reset link has been sent',
  },
  requestPasswordResetBody: { email: 'ada@example.com', returnUrl: 'http://localhost:3000/reset-password' },
  submitPasswordResetBody: {
    token: 'q8Xr2mZ0bWQ4YjU1NDRkZTQ',
    password: 'correct horse battery staple',
    confirmPassword: 'correct horse battery staple',
  },
};
