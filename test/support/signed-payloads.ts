// Builds the signed payloads a registered server sends (persona previews,
// call sessions): ES256 JWS, optionally nested in a JWE to the service key.
import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { CompactEncrypt, SignJWT } from 'jose';
import type { TestApp } from './app.js';
import { type TestUser, bearer } from './factories.js';

export interface RegisteredServer {
  name: string;
  /** PKCS#8 DER, base64url, as POST /api/servers mode generate returns it. */
  privateKey: string;
  publicKey: string;
}

let serverCounter = 0;

/** Registers a generated server for the user through the route. */
export async function registerServer(
  t: TestApp,
  user: TestUser,
  name = `srv-${process.pid}-${++serverCounter}`,
): Promise<RegisteredServer> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/servers',
    headers: bearer(user.token),
    payload: { name, mode: 'generate' },
  });
  if (res.statusCode !== 200) throw new Error(`server registration failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export const privateKeyOf = (server: Pick<RegisteredServer, 'privateKey'>) =>
  createPrivateKey({ key: Buffer.from(server.privateKey, 'base64url'), format: 'der', type: 'pkcs8' });

export interface SignOptions {
  /** Seconds from `now` (default 300). */
  expiresIn?: number;
  /** Omit exp or jti to test refusals. */
  omit?: Array<'exp' | 'jti'>;
  jti?: string;
  /** Epoch ms the token is issued at (default Date.now()); tests with a ManualClock pass t.clock.now(). */
  now?: number;
}

/** A compact JWS (ES256) of `claims` signed with the server's private key. */
export async function signPayload(
  server: Pick<RegisteredServer, 'privateKey'>,
  claims: Record<string, unknown>,
  options: SignOptions = {},
): Promise<string> {
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const body: Record<string, unknown> = { ...claims, iat: now };
  if (!options.omit?.includes('exp')) body.exp = now + (options.expiresIn ?? 300);
  if (!options.omit?.includes('jti')) body.jti = options.jti ?? randomUUID();
  return new SignJWT(body).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(privateKeyOf(server));
}

/** Nests a JWS in a compact JWE (ECDH-ES+A256KW, A256GCM, cty JWT) to the service key of GET /api/server. */
export async function encryptToService(
  jws: string,
  serviceKey: { current: string; keys: { spki: string } },
  header: Record<string, unknown> = {},
): Promise<string> {
  const publicKey = createPublicKey({
    key: Buffer.from(serviceKey.keys.spki, 'base64url'),
    format: 'der',
    type: 'spki',
  });
  return new CompactEncrypt(new TextEncoder().encode(jws))
    .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', cty: 'JWT', kid: serviceKey.current, ...header })
    .encrypt(publicKey);
}

/** An unsigned JWT (alg none), as an attacker would send it. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}
