// Start-up check that the master key and JWT secret are the ones the database
// was used with. Each is stored as an HMAC of a constant (the key itself never
// is). A different master key refuses the start: what it sealed (2FA secrets)
// could not be opened, and it would seal new data no one else can read. A
// different JWT secret is refused too on a shared (PostgreSQL) database,
// unless the operator rotates it on purpose; on SQLite it only ends every
// session, so it is recorded and reported.
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

export interface VerifyKeysOptions {
  /**
   * The database is shared by several instances (PostgreSQL): a different JWT
   * secret is refused like a wrong master key, since instances that disagree
   * turn each other's sessions away. On SQLite (one process) it is a change.
   */
  shared: boolean;
  /** JWT_SECRET_ROTATE=1: the operator stopped every instance and changes the secret for all of them. */
  rotate: boolean;
}

/**
 * Records the checks on first start; afterwards throws KeyMismatchError when
 * the master key differs, or the JWT secret differs on a shared database
 * without `rotate`; otherwise answers whether the JWT secret changed (then
 * the new one is recorded).
 */
export async function verifyKeys(
  store: PlatformStore,
  secrets: Secrets,
  clock: Clock,
  options: VerifyKeysOptions = { shared: false, rotate: false },
): Promise<{ jwtSecretChanged: boolean }> {
  const now = clock.now();
  const master = keyCheckValue(secrets.masterKey, MASTER_KEY_CHECK);
  if ((await store.claimSetting(MASTER_KEY_CHECK, master, now)) !== master) {
    throw new KeyMismatchError(
      'the master key (MASTER_KEY or DATA_DIR/master.key) is not the one this database was set up with: restore the original key from your backup; with another key the secrets stored in the database (2FA secrets, store keys) cannot be read',
    );
  }
  const jwt = keyCheckValue(secrets.jwtSecret, JWT_SECRET_CHECK);
  if ((await store.claimSetting(JWT_SECRET_CHECK, jwt, now)) === jwt) return { jwtSecretChanged: false };
  if (options.shared && !options.rotate) {
    throw new KeyMismatchError(
      'JWT_SECRET is not the one this database was last used with: every instance on one database must share it (sessions signed by one would be refused by the others); to change it for all of them, stop every instance and start the first one with JWT_SECRET_ROTATE=1',
    );
  }
  await store.replaceSetting(JWT_SECRET_CHECK, jwt, now);
  return { jwtSecretChanged: true };
}
