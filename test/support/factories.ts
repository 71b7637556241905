// Small factories for users in each state, through the real routes where the
// state is what a test is about and through the store where it is set-up only.
import type { TestApp } from './app.js';

let counter = 0;

export interface TestUser {
  id: string;
  email: string;
  phone: string;
  password: string;
  token: string;
}

export async function registerUser(t: TestApp, overrides: Record<string, unknown> = {}): Promise<TestUser> {
  counter += 1;
  const unique = `${process.pid}${counter}${Math.floor(Math.random() * 1e6)}`;
  const password = 'correct horse battery staple';
  const body = {
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: `user${unique}@example.com`,
    phone: `+1555${String(unique).slice(-7).padStart(7, '0')}`,
    password,
    confirmPassword: password,
    remember: false,
    ...overrides,
  };
  const res = await t.app.inject({ method: 'POST', url: '/api/auth/register', payload: body });
  if (res.statusCode !== 200) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
  const json = res.json();
  return {
    id: json.auth.id,
    email: body.email as string,
    phone: body.phone as string,
    password: body.password as string,
    token: json.token,
  };
}

/** A user whose phone is verified (set directly: the verification flow has its own tests). */
export async function createVerifiedUser(t: TestApp, overrides: Record<string, unknown> = {}): Promise<TestUser> {
  const user = await registerUser(t, overrides);
  await t.services.auth.users.update(user.id, { phone_verified: 1 });
  return user;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * Prepaid credit for a user, through the real top-up route and its sandbox
 * checkout (as a customer pays): calls and SMS need money or plan allowance.
 */
export async function topUp(t: TestApp, user: TestUser, usd = 5): Promise<void> {
  const res = await t.app.inject({
    method: 'POST',
    url: `/api/credits/add?amount=${usd}`,
    headers: bearer(user.token),
  });
  if (res.statusCode !== 200) throw new Error(`top-up failed: ${res.statusCode} ${res.body}`);
  const paid = await t.app.inject({ method: 'POST', url: new URL(res.json().url).pathname });
  if (paid.statusCode !== 200) throw new Error(`sandbox checkout failed: ${paid.statusCode} ${paid.body}`);
}

/** A verified user with prepaid credit (default $5), who may place calls and send SMS. */
export async function createFundedUser(
  t: TestApp,
  usd = 5,
  overrides: Record<string, unknown> = {},
): Promise<TestUser> {
  const user = await createVerifiedUser(t, overrides);
  await topUp(t, user, usd);
  return user;
}
