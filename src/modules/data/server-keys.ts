// The service's own P-256 key pairs (spec 2.6 "current server"). The first is
// created on first use; rotating adds a new generation and keeps the old ones,
// so payloads encrypted to an earlier public key still decrypt.
import { type KeyObject, createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { publicKeyOfSpki } from '../../lib/crypto.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { DataStore } from './store.js';
import type { ServiceKeysTable } from './tables.js';

/** Names of the service's key pairs: `workspace-1`, `workspace-2`, … (reserved for registered servers). */
export const SERVICE_SERVER_NAME = /^workspace-\d+$/;
const nameOf = (generation: number) => `workspace-${generation}`;

export interface ServicePublicKeys {
  /** base64url SPKI DER. */
  spki: string;
  /** The same key as a JWK, with kid = server name, for ECDH-ES+A256KW. */
  jwk: { kty: string; crv: string; x: string; y: string; kid: string; use: string; alg: string };
}

export interface ServiceServer {
  current: string;
  keys: ServicePublicKeys;
}

export class ServiceKeyring {
  /** Key pairs never change once written and are never deleted, so they are cached by name. */
  private readonly privateKeys = new Map<string, KeyObject>();
  private readonly publicKeys = new Map<string, KeyObject>();

  constructor(
    private readonly store: DataStore,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** The current server name and public keys, creating the first key pair if none exists. */
  async current(): Promise<ServiceServer> {
    const row = (await this.store.serviceKeys.current()) ?? (await this.insertGeneration(1));
    return { current: row.name, keys: publicKeysOf(row) };
  }

  /** Adds a new generation and makes it current; a concurrent rotation elsewhere counts as this one. */
  async rotateServiceKey(): Promise<ServiceServer> {
    const latest = await this.store.serviceKeys.current();
    const row = await this.insertGeneration((latest?.generation ?? 0) + 1);
    return { current: row.name, keys: publicKeysOf(row) };
  }

  /** Every key pair's public half, oldest first. */
  async listServiceKeys(): Promise<Array<{ name: string; keys: ServicePublicKeys; createdAt: number }>> {
    const rows = await this.store.serviceKeys.list();
    return rows.map((row) => ({ name: row.name, keys: publicKeysOf(row), createdAt: Number(row.created_at) }));
  }

  /** The private key of a current or retired service key pair, or null for an unknown name. */
  async getServicePrivateKey(name: string): Promise<KeyObject | null> {
    const cached = this.privateKeys.get(name);
    if (cached) return cached;
    const row = await this.store.serviceKeys.findByName(name);
    if (!row) return null;
    const key = createPrivateKey({ key: this.secretBox.open(row.private_key), format: 'der', type: 'pkcs8' });
    this.privateKeys.set(name, key);
    return key;
  }

  /** The public key of a current or retired service key pair, or null. */
  async getServicePublicKey(name: string): Promise<KeyObject | null> {
    const cached = this.publicKeys.get(name);
    if (cached) return cached;
    const row = await this.store.serviceKeys.findByName(name);
    if (!row) return null;
    const key = publicKeyOfSpki(row.public_key);
    this.publicKeys.set(name, key);
    return key;
  }

  /** Whether `name` is one of the service's own servers (current or retired). */
  async isServiceServer(name: string): Promise<boolean> {
    if (!SERVICE_SERVER_NAME.test(name)) return false;
    // A name seen once stays a service key (cached); an unknown one is asked again (another instance may have just made it).
    return (await this.getServicePublicKey(name)) !== null;
  }

  private async insertGeneration(generation: number): Promise<ServiceKeysTable> {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const row: ServiceKeysTable = {
      name: nameOf(generation),
      generation,
      public_key: publicKey.export({ format: 'der', type: 'spki' }).toString('base64url'),
      private_key: this.secretBox.seal(privateKey.export({ format: 'der', type: 'pkcs8' })),
      created_at: this.clock.now(),
    };
    if (await this.store.serviceKeys.insertIfAbsent(row)) return row;
    // Another instance or request created this generation first: use theirs.
    const winner = await this.store.serviceKeys.findByName(row.name);
    if (!winner) throw new Error(`service key ${row.name} vanished after a conflicting insert`);
    return winner;
  }
}

/** Public halves by key pair name: a pair never changes once written, and `current()` runs on every signed call. */
const publicKeysByName = new Map<string, ServicePublicKeys>();

function publicKeysOf(row: ServiceKeysTable): ServicePublicKeys {
  const cached = publicKeysByName.get(row.name);
  if (cached?.spki === row.public_key) return cached;
  const jwk = publicKeyOfSpki(row.public_key).export({ format: 'jwk' }) as {
    kty: string;
    crv: string;
    x: string;
    y: string;
  };
  const keys: ServicePublicKeys = {
    spki: row.public_key,
    jwk: { ...jwk, kid: row.name, use: 'enc', alg: 'ECDH-ES+A256KW' },
  };
  publicKeysByName.set(row.name, keys);
  return keys;
}
