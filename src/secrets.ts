// The master key (secrets at rest) and the JWT secret: from the environment,
// or, on the embedded default, generated once into DATA_DIR with mode 0600.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';

export interface Secrets {
  masterKey: Buffer;
  jwtSecret: string;
}

/** A key file that cannot be used; the message names the file and what to do. */
export class SecretsError extends Error {}

function readOrCreate(file: string, create: (() => string) | null): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  if (!create)
    throw new SecretsError(
      `${file} is missing, but this database was set up with a master key: restore master.key from your backup (or set MASTER_KEY); a new key cannot read the secrets stored in the database`,
    );
  const value = create();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return value;
}

export interface LoadSecretsOptions {
  /** False once the database holds a master key check: a missing master.key is then an error, not a first start. */
  createMasterKey?: boolean;
}

export function loadSecrets(config: Config, options: LoadSecretsOptions = {}): Secrets {
  if (config.masterKey && config.jwtSecret) {
    return { masterKey: Buffer.from(config.masterKey, 'base64'), jwtSecret: config.jwtSecret };
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const keyFile = join(config.dataDir, 'master.key');
  const newKey = () => randomBytes(32).toString('base64');
  const masterKey = config.masterKey ?? readOrCreate(keyFile, options.createMasterKey === false ? null : newKey);
  const jwtSecret =
    config.jwtSecret ?? readOrCreate(join(config.dataDir, 'jwt.secret'), () => randomBytes(48).toString('base64url'));
  const key = Buffer.from(masterKey, 'base64');
  if (key.length !== 32) throw new SecretsError(`${keyFile} does not hold a 32-byte base64 key`);
  return { masterKey: key, jwtSecret };
}
