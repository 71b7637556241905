// Records the service itself writes to or reads from a user's stores (call
// records and recordings, inbound agents and human agents): AES-256-GCM with
// the key the object names, as the SDK encrypts (a fresh 12-byte IV per
// object; the key's own IV only for objects that carry none).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { notFound } from '../../http/errors.js';
import type { KeyService } from './keys-service.js';
import type { ObjectService } from './objects-service.js';
import type { ObjectView } from './objects-view.js';
import type { RootService, StoreName } from './root-service.js';

export class StoreRecords {
  constructor(
    private readonly root: RootService,
    private readonly keys: KeyService,
    private readonly objects: ObjectService,
  ) {}

  /** Encrypts `plain` with the default key of the user's `store` and creates it there, or as a child of `parentId` in that store. */
  async create(userId: string, store: StoreName, plain: Buffer, parentId?: string): Promise<ObjectView> {
    const container = await this.root.getStore(userId, store);
    const material = await this.keys.readKeyMaterial(userId, container.keyId);
    if (!material) throw new Error(`the ${store} store key of user ${userId} is missing`);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', material.key, iv);
    const body = cipher.update(plain);
    const rest = cipher.final(); // empty for GCM: no copy of a recording's megabyte into a second buffer
    const content = rest.length ? Buffer.concat([body, rest]) : body;
    return this.objects.createObjectFromBytes(userId, {
      keyId: container.keyId,
      content,
      authTag: cipher.getAuthTag(),
      iv,
      relatedId: parentId ?? container.id,
    });
  }

  /** Replaces a record of the user's `store` with `plain`, sealed afresh with the store's default key (an `object_updated` event). */
  async replace(userId: string, store: StoreName, objectId: string, plain: Buffer): Promise<ObjectView> {
    const container = await this.root.getStore(userId, store);
    const material = await this.keys.readKeyMaterial(userId, container.keyId);
    if (!material) throw new Error(`the ${store} store key of user ${userId} is missing`);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', material.key, iv);
    const content = Buffer.concat([cipher.update(plain), cipher.final()]);
    return this.objects.updateObject(userId, objectId, {
      keyId: container.keyId,
      content: content.toString('base64'),
      authTag: cipher.getAuthTag().toString('base64'),
      iv: iv.toString('base64'),
    });
  }

  /** The plaintext of a record of the user's `store` (404 when it is not one, or cannot be read). */
  async read(userId: string, store: StoreName, objectId: string): Promise<Buffer> {
    const container = await this.root.getStore(userId, store);
    const object = await this.objects.getObject(userId, objectId);
    if (object.relatedId !== container.id) throw notFound(`${store} record`);
    return this.open(userId, object);
  }

  /** The plaintext of any object of the user (a record's child, such as a call's recording). */
  async readChild(userId: string, objectId: string): Promise<Buffer> {
    return this.open(userId, await this.objects.getObject(userId, objectId));
  }

  /** Decrypts an object of the user with the key it names. */
  async open(userId: string, object: ObjectView): Promise<Buffer> {
    const material = object.keyId ? await this.keys.readKeyMaterial(userId, object.keyId) : null;
    if (!material) throw notFound('record key');
    const iv = object.iv ? Buffer.from(object.iv, 'hex') : material.iv;
    try {
      const decipher = createDecipheriv('aes-256-gcm', material.key, iv);
      decipher.setAuthTag(Buffer.from(object.auth_tag, 'hex'));
      return Buffer.concat([decipher.update(Buffer.from(object.content, 'hex')), decipher.final()]);
    } catch {
      throw notFound('a readable record (its ciphertext does not open with its key)');
    }
  }
}
