// Registered servers (spec 2.6, 4.7): a user's own P-256 key pairs. The
// service stores only public keys; with mode `generate` it returns the private
// key once and forgets it.
import { type KeyObject, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { AppError, invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { publicKeyOfSpki } from '../../lib/crypto.js';
import { newId } from '../../lib/ids.js';
import { iso } from '../../lib/time.js';
import { decodeBase64Url } from './encoding.js';
import { SERVICE_SERVER_NAME, type ServiceKeyring, type ServiceServer } from './server-keys.js';
import type { DataStore } from './store.js';

export interface RegisterServerInput {
  name: string;
  mode: 'generate' | 'upload_public';
  publicKey?: string;
}

export interface ServerView {
  name: string;
  publicKey: string;
  createdAt: string;
}

export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class ServerService {
  constructor(
    private readonly store: DataStore,
    private readonly keyring: ServiceKeyring,
    private readonly clock: Clock,
  ) {}

  /** GET /api/server: the service's current server and its public keys. */
  currentServer(): Promise<ServiceServer> {
    return this.keyring.current();
  }

  async list(userId: string): Promise<ServerView[]> {
    const rows = await this.store.servers.listByUser(userId);
    return rows.map((r) => ({ name: r.name, publicKey: r.public_key, createdAt: iso(r.created_at) }));
  }

  async register(userId: string, input: RegisterServerInput): Promise<ServerView & { privateKey?: string }> {
    const name = input.name.trim();
    if (!SERVER_NAME.test(name))
      throw invalidInput(
        'name must be 1–64 letters, digits, dots, dashes or underscores, starting with a letter or digit',
      );
    if (SERVICE_SERVER_NAME.test(name))
      throw invalidInput(`names like "${name}" are reserved for the service's own servers`);

    let publicKey: string;
    let privateKey: string | undefined;
    if (input.mode === 'generate') {
      const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      publicKey = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64url');
      privateKey = pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url');
    } else {
      if (!input.publicKey) throw invalidInput('publicKey is required with mode upload_public');
      publicKey = parseP256Spki(input.publicKey).export({ format: 'der', type: 'spki' }).toString('base64url');
    }

    const now = this.clock.now();
    const inserted = await this.store.servers.insert({
      id: newId(),
      user_id: userId,
      name,
      public_key: publicKey,
      created_at: now,
    });
    if (!inserted) throw new AppError('conflict', `a server named "${name}" is already registered`);
    return privateKey === undefined
      ? { name, publicKey, createdAt: iso(now) }
      : { name, publicKey, privateKey, createdAt: iso(now) };
  }

  /** The public key of the user's registered server `name`, or null (for signed payloads of other modules). */
  async getServerPublicKey(userId: string, name: string): Promise<KeyObject | null> {
    const row = await this.store.servers.findByName(userId, name);
    return row ? publicKeyOfSpki(row.public_key) : null;
  }

  /** Whether `server` may be named by a store key of this user: one of their servers or the service's current one. */
  async isUsableServer(userId: string, server: string): Promise<boolean> {
    if (SERVICE_SERVER_NAME.test(server)) return (await this.keyring.current()).current === server;
    return (await this.store.servers.findByName(userId, server)) !== undefined;
  }
}

/** Parses a base64url SPKI DER and accepts only an EC P-256 public key. */
export function parseP256Spki(value: string): KeyObject {
  const der = decodeBase64Url(value.trim(), 'publicKey');
  let key: KeyObject;
  try {
    key = createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    throw invalidInput('publicKey is not a DER SubjectPublicKeyInfo (base64url)');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw invalidInput(
      `publicKey must be an EC P-256 key (got ${key.asymmetricKeyType}${key.asymmetricKeyDetails?.namedCurve ? ` ${key.asymmetricKeyDetails.namedCurve}` : ''})`,
    );
  }
  return key;
}
