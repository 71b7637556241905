// Start-up check that the master key and JWT secret are the ones the database
// was used with. Each is stored as an HMAC of a constant (the key itself never
// is). A different master key refuses the start: what it sealed (2FA secrets)
// could not be opened, and it would seal new data no one else can read. A
// different JWT secret only ends every session, so it is recorded and reported.
import { createHmac } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { Secrets } from '../../secrets.js';
import type { PlatformStore } from './store.js';

const MASTER_KEY_CHECK = 'master_key_check';
const JWT_SECRET_CHECK = 'jwt_secret_check';

export class KeyMismatchError extends Error {}

export function keyCheckValue(key: Buffer | string, purpose: string): string {
  return createHmac('sha256', key).update(`workspace-api key check: ${purpose}`).digest('base64url');
}

/** True when the database already knows a master key (a missing master.key is then a lost key, not a first start). */
export async function hasMasterKeyCheck(store: PlatformStore): Promise<boolean> {
  return (await store.readSetting(MASTER_KEY_CHECK)) !== null;
}

/**
 * Records the checks on first start; afterwards throws KeyMismatchError when
 * the master key differs, and answers whether the JWT secret changed (then
 * the new one is recorded).
 */
export async function verifyKeys(store: PlatformStore, secrets: Secrets, clock: Clock): Promise<{ jwtSecretChanged: boolean }> {
  const now = clock.now();
  const master = keyCheckValue(secrets.masterKey, MASTER_KEY_CHECK);
  if ((await store.claimSetting(MASTER_KEY_CHECK, master, now)) !== master) {
    throw new KeyMismatchError(
      'the master key (MASTER_KEY or DATA_DIR/master.key) is not the one this database was set up with: restore the original key from your backup; with another key the secrets stored in the database (2FA secrets, store keys) cannot be read',
    );
  }
  const jwt = keyCheckValue(secrets.jwtSecret, JWT_SECRET_CHECK);
  if ((await store.claimSetting(JWT_SECRET_CHECK, jwt, now)) === jwt) return { jwtSecretChanged: false };
  await store.replaceSetting(JWT_SECRET_CHECK, jwt, now);
  return { jwtSecretChanged: true };
}
