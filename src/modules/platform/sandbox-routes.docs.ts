// What the OpenAPI document says of the routes in sandbox-routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  listSandboxOutbox: {
    summary: 'Messages the sandbox SMS and email providers would have sent, newest first',
    description:
      'Present only while a sandbox provider is active and NODE_ENV is not production (never in production, even with ALLOW_SANDBOX=1), so a walkthrough or test can read the code or link a real user would receive. No credentials. ' +
      '**It holds secrets**: phone verification codes, password reset tokens and links, temporary-session codes. Anyone who can reach this route can read them and take over the accounts they belong to, so never let anyone but yourself reach a server that runs with sandbox providers.',
  },
});

export const examples = {
  listSandboxOutbox: [
    {
      id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
      channel: 'sms' as const,
      to: '+14155550123',
      body: 'Your Workspace code is 123456',
      data: { code: '123456' },
      createdAt: '2026-11-23T12:00:00.000Z',
    },
  ],
};
