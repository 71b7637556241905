// Encrypted objects (spec 2.8, 4.8): ciphertext the service stores but cannot
// read, parent/child relations through relatedId, and optimistic concurrency
// through a version that every write bumps.
import { Batcher, type Outcome } from '../../db/batcher.js';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { type EventRecorder, type NewEvent, payloadText } from '../events/recorder.js';
import { iso } from '../../lib/time.js';
import { decodeBase64, parseIfMatch, versionMismatch } from './encoding.js';
import type { NewObjectWithEvent, ObjectRow } from './objects-store.js';
import { type ObjectView, objectCreatedEvent, objectUpdatedEvent, toObjectView } from './objects-view.js';
import { isForeignKeyViolation, type DataStore } from './store.js';

export const TAG_BYTES = 16;
export const OBJECT_IV_BYTES = 12;

/** An object as sent over HTTP: ciphertext, tag and iv in base64. */
export interface ObjectInput {
  keyId: string;
  content: string;
  authTag: string;
  iv?: string | null;
  /** Create: the parent. Update: omitted keeps the parent, null detaches, an id re-parents. */
  relatedId?: string | null;
}

/** Ciphertext, tag and iv as bytes. */
export interface CiphertextBytes {
  content: Buffer;
  authTag: Buffer;
  iv: Buffer | null;
}

/** Children per page of GET /api/objects/{id}/related when `limit` is omitted (also the largest `limit`). */
export const RELATED_DEFAULT_LIMIT = 1000;
/** Default answer budget of one such page (RELATED_PAGE_BYTES). */
export const RELATED_PAGE_BYTES = 16 * 1024 * 1024;
/** Hex doubles the bytes; ids, key, version, metadata and dates add about 400. */
const estimatedAnswerBytes = (ciphertextBytes: number) => 2 * ciphertextBytes + 400;

/** An object as the service's own writers (connector ingestion) produce it. */
export interface ObjectBytesInput extends CiphertextBytes {
  keyId: string;
  relatedId?: string | null;
}

export class ObjectService {
  /** PostgreSQL: creates arriving together are written by one statement (see db/batcher.ts). */
  private readonly pgCreates: Batcher<NewObjectWithEvent, boolean> | null;
  /** Reads arriving together are one query (on SQLite too: it measured 71% → 144–159% of the floor). */
  private readonly reads: Batcher<{ userId: string; id: string }, ObjectRow | undefined>;

  constructor(
    private readonly store: DataStore,
    private readonly events: EventRecorder,
    private readonly clock: Clock,
    private readonly contentLimitBytes: number,
    private readonly relatedPageBytes = RELATED_PAGE_BYTES,
  ) {
    this.pgCreates = store.dialect === 'postgres' ? new Batcher((items) => this.writeCreates(items)) : null;
    this.reads = new Batcher((items) => this.readObjects(items));
  }

  /** Creates an object from base64 input (PUT /api/objects). */
  createObject(userId: string, input: ObjectInput): Promise<ObjectView> {
    return this.createObjectFromBytes(userId, this.decode(input));
  }

  /** Creates an object from raw bytes; the same rules and events as the HTTP route. */
  async createObjectFromBytes(userId: string, input: ObjectBytesInput): Promise<ObjectView> {
    this.checkBytes(input);
    const now = this.clock.now();
    const row: ObjectRow = {
      id: newId(now),
      user_id: userId,
      key_id: input.keyId,
      related_id: input.relatedId ?? null,
      kind: 'object',
      store: null,
      content: input.content,
      auth_tag: input.authTag,
      iv: input.iv,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    const view = toObjectView(row);
    const event = objectCreatedEvent(row, view);
    if (this.store.dialect === 'postgres') {
      await this.createInOneStatement(row, event);
      return view;
    }
    await this.inTransaction(async (tx) => {
      if (!(await tx.objects.insertWithKey(row))) throw invalidKey();
      // A parent that does not exist already failed the insert (foreign key); this also refuses another user's.
      if (row.related_id !== null && !(await tx.objects.find(userId, row.related_id))) throw notFound('related object');
      await this.events.record(tx.db, [event]);
    });
    return view;
  }

  /**
   * Creates several children of one parent, all with the same key, in one
   * transaction (on PostgreSQL one statement), one object_created event per
   * object: the service's own bulk writers (connector ingestion). All or
   * nothing: an unknown key or parent refuses the whole batch.
   */
  async createChildrenFromBytes(
    userId: string,
    parent: { keyId: string; relatedId: string },
    items: CiphertextBytes[],
  ): Promise<ObjectView[]> {
    if (items.length === 0) return [];
    const now = this.clock.now();
    const rows: ObjectRow[] = items.map((item) => {
      this.checkBytes({ ...item, keyId: parent.keyId });
      return {
        id: newId(now),
        user_id: userId,
        key_id: parent.keyId,
        related_id: parent.relatedId,
        kind: 'object',
        store: null,
        content: item.content,
        auth_tag: item.authTag,
        iv: item.iv,
        version: 1,
        created_at: now,
        updated_at: now,
      };
    });
    const views = rows.map((row) => toObjectView(row));
    const events = rows.map((row, i) => objectCreatedEvent(row, views[i]));
    if (this.store.dialect === 'postgres') {
      let written: Set<string>;
      try {
        written = await this.store.objects.insertManyWithKeyAndEvent(
          rows.map((row, i) => ({ row, payloadJson: payloadText(events[i]) })),
        );
      } catch (err) {
        if (isForeignKeyViolation(err)) throw notFound('related object');
        throw err;
      } finally {
        this.events.announce();
      }
      // One key and one parent for every row: the statement wrote all of them or none.
      if (written.size === 0)
        throw (await this.store.keys.exists(userId, parent.keyId)) ? notFound('related object') : invalidKey();
      if (written.size !== rows.length) throw new Error(`batch create wrote ${written.size} of ${rows.length} rows`);
      return views;
    }
    await this.inTransaction(async (tx) => {
      await this.checkKey(tx, userId, parent.keyId);
      if (!(await tx.objects.find(userId, parent.relatedId))) throw notFound('related object');
      await tx.objects.insert(rows);
      await this.events.record(tx.db, events);
    });
    return views;
  }

  /**
   * PostgreSQL: the object and its event in one statement, shared with the
   * creates that arrived with it; the reason for a refusal is looked up only
   * when nothing was written.
   */
  private async createInOneStatement(row: ObjectRow, event: NewEvent): Promise<void> {
    let created: boolean;
    try {
      created = await this.pgCreates!.run({ row, payloadJson: payloadText(event) });
    } catch (err) {
      if (isForeignKeyViolation(err)) throw notFound('related object'); // the parent was deleted meanwhile
      throw err;
    }
    if (!created)
      throw (await this.store.keys.exists(row.user_id, row.key_id!)) ? notFound('related object') : invalidKey();
  }

  /** One batch of PostgreSQL creates: one statement, or one each when that statement failed; then one announce. */
  private async writeCreates(items: NewObjectWithEvent[]): Promise<Array<Outcome<boolean>>> {
    try {
      if (items.length > 1) {
        try {
          const written = await this.store.objects.insertManyWithKeyAndEvent(items);
          return items.map((item) => ({ ok: true, value: written.has(item.row.id) }));
        } catch {
          // One item failed the statement for all (a parent deleted meanwhile): each on its own, for its own answer.
        }
      }
      return await Promise.all(
        items.map(async (item): Promise<Outcome<boolean>> => {
          try {
            return { ok: true, value: (await this.store.objects.insertManyWithKeyAndEvent([item])).has(item.row.id) };
          } catch (error) {
            return { ok: false, error };
          }
        }),
      );
    } finally {
      // Also after a failure: the event ids it drew are never coming, and brokers stop waiting for them.
      this.events.announce();
    }
  }

  /** One batch of reads: one query; each caller gets its row only if it is the owner's. */
  private async readObjects(
    items: Array<{ userId: string; id: string }>,
  ): Promise<Array<Outcome<ObjectRow | undefined>>> {
    if (items.length === 1) return [{ ok: true, value: await this.store.objects.find(items[0].userId, items[0].id) }];
    const rows = await this.store.objects.findManyById([...new Set(items.map((item) => item.id))]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return items.map(({ userId, id }) => {
      const row = byId.get(id);
      return { ok: true, value: row?.user_id === userId ? row : undefined };
    });
  }

  async getObject(userId: string, id: string): Promise<ObjectView> {
    const row = await this.reads.run({ userId, id });
    if (!row) throw notFound('object');
    return toObjectView(row);
  }

  /**
   * Children attached through relatedId, oldest first; `after` is the id of
   * the last child already seen. A page holds at most `limit` children
   * (RELATED_DEFAULT_LIMIT when omitted) and stops before the answer would
   * pass the byte budget, though it always holds at least one child. The
   * sizes are read first, so no ciphertext beyond the page is ever loaded.
   * `next` is the cursor of the following page when there may be more.
   */
  async listRelated(
    userId: string,
    id: string,
    page: { limit?: number; after?: string } = {},
  ): Promise<{ items: ObjectView[]; next: string | null }> {
    if (!(await this.store.objects.find(userId, id))) throw notFound('object');
    let after: ObjectRow | undefined;
    if (page.after !== undefined) {
      after = await this.store.objects.find(userId, page.after);
      if (!after || after.related_id !== id) throw invalidInput('after must be the id of a child of this object');
    }
    const limit = page.limit ?? RELATED_DEFAULT_LIMIT;
    // One more than the page, to know whether another page follows.
    const sizes = await this.store.objects.listChildSizes(userId, id, { limit: limit + 1, after });
    const chosen: string[] = [];
    let budget = this.relatedPageBytes;
    for (const child of sizes.slice(0, limit)) {
      const weight = estimatedAnswerBytes(Number(child.bytes));
      if (chosen.length > 0 && weight > budget) break;
      chosen.push(child.id);
      budget -= weight;
    }
    const found = new Map((await this.store.objects.findManyById(chosen)).map((row) => [row.id, row]));
    // A child deleted or moved between the two reads is left out.
    const rows = chosen
      .map((childId) => found.get(childId))
      .filter((row): row is ObjectRow => row !== undefined && row.user_id === userId && row.related_id === id);
    const more = chosen.length < sizes.length;
    return { items: rows.map(toObjectView), next: more && rows.length > 0 ? rows[rows.length - 1].id : null };
  }

  /**
   * The ids of an object's children in creation order, at most `most`, without reading their content (a call's
   * recording parts: listRelated hex-encodes each part's ciphertext, ~0.4 s of the event loop per call view at 150
   * calls on SQLite, to find out whether one exists). 404 when the object is not the user's.
   */
  async childIds(userId: string, id: string, most = Number.POSITIVE_INFINITY): Promise<string[]> {
    if (!(await this.store.objects.find(userId, id))) throw notFound('object');
    const ids: string[] = [];
    let after: { created_at: number; id: string } | undefined;
    while (ids.length < most) {
      const want = Math.min(most - ids.length, 1000);
      const page = await this.store.objects.listChildSizes(userId, id, { limit: want, after });
      ids.push(...page.map((child) => child.id));
      if (page.length < want) break;
      const last = page.at(-1)!;
      after = { created_at: Number(last.created_at), id: last.id };
    }
    return ids;
  }

  /**
   * Replaces the ciphertext (PATCH). With `ifMatch` only a write based on the
   * current version succeeds; the version check and the write are one
   * conditional UPDATE, so concurrent writers cannot both win.
   */
  async updateObject(userId: string, id: string, input: ObjectInput, ifMatch?: string): Promise<ObjectView> {
    const versions = parseIfMatch(ifMatch);
    const bytes = this.decode(input);
    this.checkBytes(bytes);
    const now = this.clock.now();
    const updated = await this.inTransaction(async (tx) => {
      const current = await tx.objects.find(userId, id);
      if (!current) throw notFound('object');
      if (current.kind !== 'object')
        throw new AppError(
          'conflict',
          `the ${current.kind} container is managed by the service and cannot be replaced`,
        );
      if (versions !== null && !versions.includes(Number(current.version)))
        throw versionMismatch(Number(current.version));
      await this.checkKey(tx, userId, bytes.keyId);
      const relatedId = input.relatedId === undefined ? current.related_id : input.relatedId;
      if (relatedId !== null && relatedId !== current.related_id) {
        if (!(await tx.objects.find(userId, relatedId))) throw notFound('related object');
        await tx.objects.lockTree(userId);
        if (await tx.objects.isSelfOrAncestor(userId, id, relatedId)) {
          throw invalidInput('relatedId would make the object its own ancestor');
        }
      }
      const change = {
        key_id: bytes.keyId,
        content: bytes.content,
        auth_tag: bytes.authTag,
        iv: bytes.iv,
        related_id: relatedId,
        updated_at: now,
      };
      const row = await tx.objects.update(userId, id, change, versions);
      if (!row) {
        // Another writer changed (or removed) the object after it was read.
        const latest = await tx.objects.find(userId, id);
        throw latest ? versionMismatch(Number(latest.version)) : notFound('object');
      }
      await this.events.record(tx.db, [objectUpdatedEvent(userId, row, now)]);
      return row;
    });
    return toObjectView(updated);
  }

  /**
   * Deletes an object, its publications and its relations: children are
   * detached (relatedId cleared, version bumped), not deleted. The root and
   * the store containers cannot be deleted.
   */
  async deleteObject(userId: string, id: string): Promise<void> {
    const now = this.clock.now();
    await this.inTransaction(async (tx) => {
      const row = await tx.objects.find(userId, id);
      if (!row) throw notFound('object');
      if (row.kind !== 'object') throw new AppError('conflict', `the ${row.kind} container cannot be deleted`);
      const events: NewEvent[] = [];
      for (const p of await tx.publications.deleteByObject(userId, id)) {
        events.push({
          userId,
          type: 'unpublish',
          payload: { type: p.type, related_id: p.related_id, object_id: p.object_id, timestamp: iso(now) },
        });
      }
      for (const child of await tx.objects.detachChildren(userId, id, now))
        events.push(objectUpdatedEvent(userId, child, now));
      await tx.objects.delete(userId, id);
      events.push({ userId, type: 'object_deleted', payload: { object_id: id, deleted_at: iso(now) } });
      await this.events.record(tx.db, events);
    });
  }

  /** Runs a write transaction, announces its events after commit, and maps a lost parent race to 404. */
  private async inTransaction<T>(work: (tx: DataStore) => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await this.store.transaction(work);
    } catch (err) {
      if (isForeignKeyViolation(err)) throw notFound('related object');
      throw err;
    }
    this.events.announce();
    return result;
  }

  private async checkKey(tx: DataStore, userId: string, keyId: string): Promise<void> {
    if (!(await tx.keys.exists(userId, keyId))) throw invalidKey();
  }

  private decode(input: ObjectInput): ObjectBytesInput {
    return {
      keyId: input.keyId,
      content: decodeBase64(input.content, 'content', this.contentLimitBytes),
      authTag: decodeBase64(input.authTag, 'authTag'),
      iv: input.iv === undefined || input.iv === null ? null : decodeBase64(input.iv, 'iv'),
      relatedId: input.relatedId,
    };
  }

  private checkBytes(input: ObjectBytesInput): void {
    if (input.content.length > this.contentLimitBytes)
      throw new AppError('payload_too_large', `content is larger than ${this.contentLimitBytes} bytes`);
    if (input.authTag.length !== TAG_BYTES)
      throw invalidInput(`authTag must be ${TAG_BYTES} bytes (an AES-GCM tag); got ${input.authTag.length}`);
    if (input.iv !== null && input.iv.length !== OBJECT_IV_BYTES)
      throw invalidInput(`iv must be ${OBJECT_IV_BYTES} bytes; got ${input.iv.length}`);
  }
}

const invalidKey = () => new AppError('invalid_key', 'keyId is not one of your keys (unknown or deleted)');
