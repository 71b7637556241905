// Store keys (spec 2.7, 4.7): AES-256 keys bound to a server, sealed at rest
// with the master key. The key's `iv` is kept for compatibility only: AES-GCM
// must never reuse a nonce under one key, so every object carries its own iv.
import { randomBytes } from 'node:crypto';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { EventRecorder, NewEvent } from '../events/recorder.js';
import { iso } from '../../lib/time.js';
import { decodeBase64 } from './encoding.js';
import type { ServerService } from './server-service.js';
import type { DataStore } from './store.js';
import type { StoreKeysTable } from './tables.js';

export const KEY_BYTES = 32;
export const IV_BYTES = 12;

export interface CreateKeyInput {
  server: string;
  /** base64, 32 bytes (bring your own key). */
  key?: string;
  /** base64, 12 bytes. */
  iv?: string;
}

export interface KeyView {
  id: string;
  server: string;
  key: string;
  iv: string;
  created_at: string;
  deprecated: boolean;
}

export class KeyService {
  constructor(
    private readonly store: DataStore,
    private readonly servers: ServerService,
    private readonly secretBox: SecretBox,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}

  /** Creates a key (random unless supplied) bound to one of the caller's servers or the service's current one. */
  async create(userId: string, input: CreateKeyInput): Promise<{ id: string }> {
    const key = input.key === undefined ? randomBytes(KEY_BYTES) : decodeBase64(input.key, 'key');
    if (key.length !== KEY_BYTES) throw invalidInput(`key must be ${KEY_BYTES} bytes (AES-256); got ${key.length}`);
    const iv = input.iv === undefined ? randomBytes(IV_BYTES) : decodeBase64(input.iv, 'iv');
    if (iv.length !== IV_BYTES) throw invalidInput(`iv must be ${IV_BYTES} bytes; got ${iv.length}`);
    if (!(await this.servers.isUsableServer(userId, input.server))) {
      throw invalidInput(
        `server "${input.server}" is neither one of your registered servers nor the service's current server`,
      );
    }
    const row = this.buildRow(userId, input.server, key, iv);
    await this.store.transaction(async (tx) => {
      await tx.keys.insert([row]);
      await this.events.record(tx.db, [keyCreatedEvent(row)]);
    });
    this.events.announce();
    return { id: row.id };
  }

  async get(userId: string, id: string): Promise<KeyView> {
    const row = await this.store.keys.find(userId, id);
    if (!row) throw notFound('key');
    return {
      id: row.id,
      server: row.server,
      key: this.secretBox.open(row.key_material).toString('hex'),
      iv: Buffer.from(row.iv).toString('hex'),
      created_at: iso(row.created_at),
      deprecated: Number(row.deprecated) === 1,
    };
  }

  /** The raw key and iv of a live key of the user, or null (for the service's own writes). */
  async readKeyMaterial(userId: string, id: string): Promise<{ key: Buffer; iv: Buffer } | null> {
    const row = await this.store.keys.find(userId, id);
    return row ? { key: this.secretBox.open(row.key_material), iv: Buffer.from(row.iv) } : null;
  }

  /** Removes the key's metadata; objects encrypted with it stay. A store's default key cannot be removed. */
  async delete(userId: string, id: string): Promise<void> {
    const deletedAt = this.clock.now();
    await this.store.transaction(async (tx) => {
      if (!(await tx.keys.exists(userId, id))) throw notFound('key');
      if (await tx.objects.isStoreDefaultKey(userId, id))
        throw new AppError('conflict', "this key is a store's default key and cannot be deleted");
      await tx.keys.delete(userId, id);
      await this.events.record(tx.db, [
        { userId, type: 'key_deleted', payload: { key_id: id, user_id: userId, deleted_at: iso(deletedAt) } },
      ]);
    });
    this.events.announce();
  }

  /** A new random key row (sealed), for callers that insert it in their own transaction. */
  buildRow(
    userId: string,
    server: string,
    key: Buffer = randomBytes(KEY_BYTES),
    iv: Buffer = randomBytes(IV_BYTES),
  ): StoreKeysTable {
    return {
      id: newId(),
      user_id: userId,
      server,
      key_material: this.secretBox.seal(key),
      iv,
      deprecated: 0,
      created_at: this.clock.now(),
    };
  }
}

export const keyCreatedEvent = (row: StoreKeysTable): NewEvent => ({
  userId: row.user_id,
  type: 'key_created',
  payload: { key_id: row.id, user_id: row.user_id, created_at: iso(row.created_at) },
});
