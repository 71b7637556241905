// Store-scoped helpers: records of one of the root's eight stores, as JSON
// values. Each record is an object whose relatedId is the store's container,
// encrypted with the store's default key under a fresh IV.
import { encryptJson } from './crypto.js';
import {
  type KeysApi,
  type ObjectsApi,
  type RootObject,
  type StoreName,
  type StoredObject,
  type Version,
  objectInput,
} from './data.js';
import type { EventsApi } from './events-api.js';
import type { EventSubscription, SubscribeOptions, WorkspaceEvent } from './events.js';
import type { EventPayloads } from './event-types.js';

/** A decrypted record with the envelope the service keeps. */
export interface StoreRecord<T> {
  id: string;
  value: T;
  /** Pass as ifMatch to update only if nobody changed the record since. */
  version: number;
  keyId: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface StoreInfo {
  /** The store's container object: records are its children. */
  id: string;
  /** The store's default key. */
  keyId: string;
}

export class StoreClient<T = unknown> {
  private info: Promise<StoreInfo> | null = null;

  constructor(
    readonly name: StoreName,
    private readonly loadRoot: () => Promise<RootObject>,
    private readonly objects: ObjectsApi,
    private readonly keys: KeysApi,
    private readonly events: EventsApi,
  ) {}

  /** The container id and default key of this store (from GET /api/root, read once). */
  describe(): Promise<StoreInfo> {
    if (!this.info) {
      this.info = this.loadRoot().then((root) => {
        const store = root.stores[this.name];
        if (!store) throw new Error(`the root has no store named ${this.name}`);
        return { id: store.id, keyId: store.keyId };
      });
      this.info.catch(() => (this.info = null));
    }
    return this.info;
  }

  /** Encrypts `value` as JSON with the store's key and stores it in this store. */
  async create(value: T): Promise<StoreRecord<T>> {
    const { id: storeId, keyId } = await this.describe();
    const key = await this.keys.use(keyId);
    const payload = await encryptJson(key.cryptoKey, value);
    const object = await this.objects.create(objectInput(keyId, payload, storeId));
    return this.record(object, value);
  }

  /** The store's records, oldest first, decrypted. Use limit/after to page. */
  async list(page: { limit?: number; after?: string } = {}): Promise<StoreRecord<T>[]> {
    const { id: storeId } = await this.describe();
    const objects = await this.objects.related(storeId, page);
    return Promise.all(objects.map((o) => this.open(o)));
  }

  async get(id: string): Promise<StoreRecord<T>> {
    return this.open(await this.objects.get(id));
  }

  /** Replaces the record's value (re-encrypted under a fresh IV); with ifMatch only if still at that version. */
  async update(id: string, value: T, options: { ifMatch?: Version } = {}): Promise<StoreRecord<T>> {
    const { keyId } = await this.describe();
    const key = await this.keys.use(keyId);
    const payload = await encryptJson(key.cryptoKey, value);
    const object = await this.objects.update(id, objectInput(keyId, payload), options);
    return this.record(object, value);
  }

  delete(id: string): Promise<void> {
    return this.objects.delete(id);
  }

  /** Decrypts an object read from this store (or the payload of its object_created event). */
  async open(object: StoredObject): Promise<StoreRecord<T>> {
    return this.record(object, await this.objects.decrypt<T>(object));
  }

  /** Decrypts the record carried by an object_created event of this store. */
  async openEvent(event: WorkspaceEvent<EventPayloads['object_created']>): Promise<{ id: string; value: T }> {
    const data = event.data;
    return { id: data.id, value: await this.objects.decrypt<T>({ ...data, keyId: data.key_id }) };
  }

  /** object_created events of this store's records (decrypt each with openEvent). */
  async subscribe(
    options: Omit<SubscribeOptions<EventPayloads['object_created']>, 'filter'> = {},
  ): Promise<EventSubscription<EventPayloads['object_created']>> {
    const { id: storeId } = await this.describe();
    return this.events.subscribe('object_created', { ...options, filter: { related_object_id: storeId } });
  }

  private record(object: StoredObject, value: T): StoreRecord<T> {
    return {
      id: object.id,
      value,
      version: object.version,
      keyId: object.keyId,
      createdAt: object.createdAt,
      updatedAt: object.updatedAt,
    };
  }
}
