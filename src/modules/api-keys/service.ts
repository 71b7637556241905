// Long-lived API keys: `wsk_` + 32 random bytes (base64url). Only a SHA-256 of
// the key is stored; the clear key is returned once, at creation.
import { invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import { iso } from '../../lib/time.js';
import { newId } from '../../lib/ids.js';
import type { UserRow } from '../auth/store.js';
import type { AuditLog, RequestMeta } from '../platform/audit.js';
import type { ApiKeyStore } from './store.js';

export const API_KEY_PREFIX = 'wsk_';
/** last_used_at is written at most this often per key, so key-authenticated traffic stays read-only. */
const TOUCH_INTERVAL_MS = 60_000;

export const isApiKey = (credential: string) => credential.startsWith(API_KEY_PREFIX);

export interface ApiKeyView {
  id: string;
  name: string;
  key: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export class ApiKeyService {
  constructor(
    private readonly store: ApiKeyStore,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** The name is stored trimmed; a name of only spaces is refused rather than stored empty. */
  async create(userId: string, rawName: string, meta: RequestMeta): Promise<ApiKeyView> {
    const name = rawName.trim();
    if (!name) throw invalidInput('name may not be blank');
    const key = API_KEY_PREFIX + randomToken(32);
    const now = this.clock.now();
    const row = {
      id: newId(),
      user_id: userId,
      name,
      key_hash: sha256Hex(key),
      last4: key.slice(-4),
      created_at: now,
      last_used_at: null,
    };
    await this.store.insert(row);
    await this.audit.record({ userId, action: 'api_key.create', success: true, meta, detail: { keyId: row.id, name } });
    return { id: row.id, name, key, createdAt: iso(now), lastUsedAt: null };
  }

  async list(userId: string): Promise<ApiKeyView[]> {
    const rows = await this.store.listByUser(userId);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      key: `${API_KEY_PREFIX}…${r.last4}`,
      createdAt: iso(r.created_at),
      lastUsedAt: r.last_used_at === null ? null : iso(r.last_used_at),
    }));
  }

  async delete(userId: string, id: string, meta: RequestMeta): Promise<void> {
    if (!(await this.store.delete(userId, id))) throw notFound('API key');
    await this.audit.record({ userId, action: 'api_key.delete', success: true, meta, detail: { keyId: id } });
  }

  /** The owner of the key `keyId` while the key exists, else null. */
  async ownerOf(keyId: string): Promise<UserRow | null> {
    return (await this.store.findOwnerById(keyId)) ?? null;
  }

  /** The owner of a clear API key, or null; records when the key was last used. */
  async resolve(key: string): Promise<{ user: UserRow; keyId: string } | null> {
    const row = await this.store.findWithOwner(sha256Hex(key));
    if (!row) return null;
    const { key_id, key_last_used_at, ...user } = row;
    const now = this.clock.now();
    if (key_last_used_at === null || now - Number(key_last_used_at) > TOUCH_INTERVAL_MS)
      await this.store.touch(key_id, now);
    return { user, keyId: key_id };
  }
}
