// The root object (spec 2.5): created on the user's first GET /api/root with
// one container object per store, each with a default store key bound to the
// service's current server. Two concurrent first requests create one root:
// the data_roots primary key admits one claim, and the loser reads the winner's.
import { newId } from '../../lib/ids.js';
import type { Clock } from '../../lib/clock.js';
import type { EventRecorder, NewEvent } from '../events/recorder.js';
import { iso } from '../../lib/time.js';
import { type KeyService, keyCreatedEvent } from './keys-service.js';
import type { ObjectRow } from './objects-store.js';
import { objectCreatedEvent } from './objects-view.js';
import type { ServiceKeyring, ServiceServer } from './server-keys.js';
import type { DataStore } from './store.js';

/** The eight stores of spec section 1, in the spec's order. */
export const STORE_NAMES = [
  'contacts',
  'calls',
  'agents',
  'tasks',
  'conversational-pathways',
  'campaigns',
  'sms-messages',
  'performance-metrics',
] as const;
export type StoreName = (typeof STORE_NAMES)[number];

export interface RootView {
  id: string;
  stores: Record<StoreName, { id: string; keyId: string }>;
  server: ServiceServer;
  createdAt: string;
}

export class RootService {
  constructor(
    private readonly store: DataStore,
    private readonly keyring: ServiceKeyring,
    private readonly keys: KeyService,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
  ) {}

  /** The user's root, created with its stores and their default keys on first use. */
  async getRoot(userId: string): Promise<RootView> {
    const server = await this.keyring.current();
    let root = await this.store.roots.find(userId);
    if (!root) {
      await this.createRoot(userId, server.current);
      root = await this.store.roots.find(userId);
      if (!root) throw new Error('root vanished after creation');
    }
    const rows = new Map((await this.store.objects.listStores(userId)).map((s) => [s.store, s]));
    const stores = {} as RootView['stores'];
    for (const name of STORE_NAMES) {
      const row = rows.get(name);
      if (!row) throw new Error(`store container ${name} of user ${userId} is missing`);
      stores[name] = { id: row.id, keyId: row.key_id! };
    }
    return { id: root.root_id, stores, server, createdAt: iso(root.created_at) };
  }

  /** The container object id and default key of one store, creating the root if needed (connector ingestion). */
  async getStore(userId: string, name: StoreName): Promise<{ id: string; keyId: string }> {
    return (await this.getRoot(userId)).stores[name];
  }

  private async createRoot(userId: string, serverName: string): Promise<void> {
    const now = this.clock.now();
    const rootId = newId(now);
    const container = (
      id: string,
      kind: 'root' | 'store',
      store: string | null,
      keyId: string | null,
      relatedId: string | null,
    ): ObjectRow => ({
      id,
      user_id: userId,
      key_id: keyId,
      related_id: relatedId,
      kind,
      store,
      content: Buffer.alloc(0),
      auth_tag: Buffer.alloc(0),
      iv: null,
      version: 1,
      created_at: now,
      updated_at: now,
    });
    const created = await this.store.transaction(async (tx) => {
      if (!(await tx.roots.insertIfAbsent({ user_id: userId, root_id: rootId, created_at: now }))) return false;
      const keyRows = STORE_NAMES.map(() => this.keys.buildRow(userId, serverName));
      const objects = [
        container(rootId, 'root', null, null, null),
        ...STORE_NAMES.map((name, i) => container(newId(now), 'store', name, keyRows[i].id, rootId)),
      ];
      await tx.keys.insert(keyRows);
      await tx.objects.insert(objects);
      const events: NewEvent[] = [...keyRows.map(keyCreatedEvent), ...objects.map((row) => objectCreatedEvent(row))];
      await this.events.record(tx.db, events);
      return true;
    });
    if (created) this.events.announce();
  }
}
