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

function readOrCreate(file: string, create: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const value = create();
  writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return value;
}

export function loadSecrets(config: Config): Secrets {
  if (config.masterKey && config.jwtSecret) {
    return { masterKey: Buffer.from(config.masterKey, 'base64'), jwtSecret: config.jwtSecret };
  }
  mkdirSync(config.dataDir, { recursive: true });
  const masterKey = config.masterKey ?? readOrCreate(join(config.dataDir, 'master.key'), () => randomBytes(32).toString('base64'));
  const jwtSecret = config.jwtSecret ?? readOrCreate(join(config.dataDir, 'jwt.secret'), () => randomBytes(48).toString('base64url'));
  const key = Buffer.from(masterKey, 'base64');
  if (key.length !== 32) throw new Error(`${join(config.dataDir, 'master.key')} does not hold a 32-byte base64 key`);
  return { masterKey: key, jwtSecret };
}
