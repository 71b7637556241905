// What the OpenAPI document says of the routes in two-factor-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { exampleAuth } from './schemas.js';

const setupExample = {
  status: '2fa_setup' as const,
  otpauthUrl: 'otpauth://totp/Workspace:ada%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Workspace',
  base32: 'JBSWY3DPEHPK3PXP',
};

export const docs = describeRoutes({
  requestTwoFactorSetup: {
    summary: 'Start TOTP set-up: a new secret to scan, confirmed with enable/submit',
    description: 'Answers 409 when 2FA is already configured: POST /api/auth/2fa/reset replaces the secret.',
  },
  confirmTwoFactorSetup: {
    summary: 'Confirm the pending secret with a code from it; turns 2FA on and issues recovery codes',
    description: 'Also confirms the new secret handed out by /api/auth/2fa/reset, which then replaces the old one.',
  },
  verifyTwoFactor: {
    summary: 'Pass 2FA after login answered 2fa_required, with a TOTP code or a recovery code',
    description: 'Answers a re-issued JWT with 2FA passed and writes the cookie; the limited token is revoked.',
  },
  resetTwoFactor: {
    summary: 'Replace the TOTP secret: checks a current code, answers a new secret to confirm with enable/submit',
    description: 'The current secret keeps working until the new one is confirmed, and the caller stays signed in.',
  },
});

export const examples = {
  setup: setupExample,
  codeBody: { token: '123456' },
  confirmTwoFactorSetup: {
    status: 'ok' as const,
    token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTkzNmIyZSJ9.c2lnbmF0dXJl',
    auth: { ...exampleAuth, twoFactorPassed: true, twoFactorConfigured: true },
    recoveryCodes: ['abcde-12345', 'fghij-67890'],
  },
};
