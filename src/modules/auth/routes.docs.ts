// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';
import { exampleAuth } from './schemas.js';

/** What both forms of signing out do. */
const logoutDescription =
  'Credentials are optional: without a valid one it only clears the cookie, and answers 200 alike. ' +
  "A request whose credential is the session cookie (no Authorization header) and that a browser sends from another site (`Sec-Fetch-Site: cross-site` or `same-site`, or an Origin other than the server's) is refused with 403 `forbidden`: the session stays and the cookie is kept, so a link or form on another site cannot sign a console user out.";

export const docs = describeRoutes({
  getAuthStatus: {
    summary: 'The signed-in user and their authentication status',
    description:
      'Works with any valid credential, even while two-factor verification is pending, so a client can tell what the user must do next (`status`).',
  },
  register: {
    summary: 'Create an account; the phone is verified next (status phone_not_verified)',
    description:
      'Creates the account and signs it in (the `token` cookie is written). The answer has status `phone_not_verified`: POST /api/auth/verify/request next. Rate limited per IP. ' +
      'It does not tell whether an email has an account: for an email that already has one the answer looks the same (status 200, same fields, cookie), but nothing is created, its token authenticates nobody (401 on use), and the owner of the email is told by email that someone tried to sign up. Someone who already has an account signs in or resets the password instead.',
  },
  login: {
    summary: 'Sign in with email and password',
    description:
      'Outcomes: ok, phone_not_verified (cookie set), 2fa_required (limited token, no cookie: POST /api/auth/2fa/verify next), or 400 { status: error, message, code: invalid_credentials }. Wrong email and wrong password answer alike. Rate limited per IP and per account.',
  },
  postLogout: {
    summary: 'Sign out (POST): the session token is revoked and the cookie cleared',
    description: `An addition to the spec, the form to use: signing out changes state, so browsers should send it as POST (GET /api/auth/logout is the spec's form and answers the same). No body. ${logoutDescription}`,
  },
  logout: {
    summary: 'Sign out: the session token is revoked and the cookie cleared',
    description: `The spec's form; POST /api/auth/logout answers the same and is the one for browsers. ${logoutDescription}`,
  },
});

export const examples = {
  logout: { status: 'logout' as const },
  getAuthStatus: {
    status: 'ok' as const,
    auth: exampleAuth,
  },
  register: {
    status: 'phone_not_verified' as const,
    token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ2ZXIiOjAsInN1YiI6IjAxOTM2YjJlIn0.c2lnbmF0dXJl',
    auth: { ...exampleAuth, phoneVerified: false },
  },
  login: { status: 'error' as const, message: 'invalid email or password', code: 'invalid_credentials' },
};
