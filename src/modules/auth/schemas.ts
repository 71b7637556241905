// Request and response schemas of the account-access routes (spec 2.1–2.3, 4.1–4.5).
import { Type } from 'typebox';
import { Email } from '../../http/schemas.js';

export const AuthInfo = Type.Object(
  {
    id: Type.String(),
    email: Type.String({ format: 'email' }),
    firstName: Type.String(),
    lastName: Type.String(),
    phoneVerified: Type.Boolean(),
    twoFactorPassed: Type.Boolean(),
    twoFactorConfigured: Type.Boolean(),
  },
  { $id: 'AuthInfo' },
);

export const AuthStatus = Type.Union([
  Type.Literal('ok'),
  Type.Literal('phone_not_verified'),
  Type.Literal('2fa_required'),
]);

/** Answer of every flow that signs a user in. */
/** The signed-in user of the examples (AuthInfo): phone verified, no second factor. */
export const exampleAuth = {
  id: '01936b2e-8f3a-7c41-9d2e-5b7a3c9e1f40',
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  phoneVerified: true,
  twoFactorPassed: false,
  twoFactorConfigured: false,
};

export const LoginResponse = Type.Object(
  {
    status: AuthStatus,
    token: Type.String({ description: 'JWT; also written to the `token` cookie unless 2FA is pending' }),
    auth: Type.Ref('AuthInfo'),
  },
  {
    $id: 'LoginResponse',
    description: 'A session',
    examples: [
      {
        status: 'ok',
        token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIwMTkzNmIyZSJ9.c2lnbmF0dXJl',
        auth: exampleAuth,
      },
    ],
  },
);

export const LoginFailure = Type.Object(
  {
    status: Type.Optional(
      Type.Literal('error', { description: 'Present when the credentials were refused (not on input errors)' }),
    ),
    message: Type.String(),
    code: Type.String(),
  },
  {
    $id: 'LoginFailure',
    description:
      'Login failure (spec 7): { status: error, message } for refused credentials, { message, code } for invalid input',
  },
);

export const RegisterBody = Type.Object(
  {
    firstName: Type.Optional(Type.String({ maxLength: 100 })),
    lastName: Type.Optional(Type.String({ maxLength: 100 })),
    email: Email,
    phone: Type.String({ minLength: 1, maxLength: 32, description: 'International format, e.g. +14155550123' }),
    password: Type.String({ maxLength: 1024 }),
    confirmPassword: Type.String({ maxLength: 1024 }),
    remember: Type.Optional(Type.Boolean({ default: false })),
  },
  {
    examples: [
      {
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.com',
        phone: '+14155550123',
        password: 'correct horse battery staple',
        confirmPassword: 'correct horse battery staple',
      },
    ],
  },
);

export const LoginBody = Type.Object(
  {
    email: Email,
    password: Type.String({ maxLength: 1024 }),
    remember: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'A longer session: 30 days (REMEMBER_TTL_SECONDS) instead of 24 hours (SESSION_TTL_SECONDS)',
      }),
    ),
  },
  { examples: [{ email: 'ada@example.com', password: 'correct horse battery staple', remember: true }] },
);

export const StatusResponse = Type.Object({
  status: AuthStatus,
  auth: Type.Union([Type.Ref('AuthInfo'), Type.Null()]),
});
