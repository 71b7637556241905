// SQL for encrypted objects and their parent/child relations.
import { type Compilable, type ExpressionBuilder, type Kysely, type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import { prepareQuery } from '../../db/prepared.js';
import type { Database } from '../../db/schema.js';
import { transactionId } from '../events/recorder.js';
import type { ObjectsTable } from './tables.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

export type ObjectRow = ObjectsTable;

export interface CiphertextChange {
  key_id: string;
  content: Buffer;
  auth_tag: Buffer;
  iv: Buffer | null;
  related_id: string | null;
  updated_at: number;
}

const objectOfUser = prepareQuery((db, p) =>
  db.selectFrom('objects').selectAll().where('id', '=', p(0)).where('user_id', '=', p(1)),
);
/** Many objects by id in one query: the ids are one parameter (a PostgreSQL array, a JSON array on SQLite), so one statement text for any count. */
const objectsById = prepareQuery((db, p) =>
  db
    .selectFrom('objects')
    .selectAll()
    .where('id', '=', sql<string>`any(${p(0)}::text[])`),
);
const objectsByIdSqlite = prepareQuery((db, p) =>
  db
    .selectFrom('objects')
    .selectAll()
    .where('id', 'in', sql<string>`(select value from json_each(${p(0)}))`),
);
/** Children listed after a cursor row, in (created_at, id) order. */
const childrenAfter = (after: { created_at: number; id: string }) => (eb: ExpressionBuilder<Database, 'objects'>) =>
  eb.or([
    eb('created_at', '>', after.created_at),
    eb.and([eb('created_at', '=', after.created_at), eb('id', '>', after.id)]),
  ]);

const OBJECT_COLUMNS = [
  'id',
  'user_id',
  'key_id',
  'related_id',
  'kind',
  'store',
  'content',
  'auth_tag',
  'iv',
  'version',
  'created_at',
  'updated_at',
] as const;
const insertOneObject = prepareQuery((db, p) =>
  db
    .insertInto('objects')
    .values(Object.fromEntries(OBJECT_COLUMNS.map((column, i) => [column, p(i)])) as unknown as ObjectsTable),
);
/** The insert only when the row's key_id is a store key of its user: one statement instead of a check and an insert. */
const insertObjectWithKey = prepareQuery((db, p) =>
  db
    .insertInto('objects')
    .columns([...OBJECT_COLUMNS])
    .expression(
      db
        .selectNoFrom((eb) => OBJECT_COLUMNS.map((column, i) => eb.val(p(i)).as(column)))
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('store_keys')
              .select('id')
              .where('id', '=', p(OBJECT_COLUMNS.indexOf('key_id')))
              .where('user_id', '=', p(OBJECT_COLUMNS.indexOf('user_id'))),
          ),
        ),
    ),
);

/**
 * PostgreSQL, one statement (and so its own transaction, without BEGIN and
 * COMMIT round trips) for one or many new plain objects (concurrent creates
 * gathered by the service), the rows passed as arrays, one per column. Each
 * row is inserted when its key is its user's store key and its parent (if
 * any) its user's object, and its event appended the way EventRecorder.record()
 * does, the transaction id taken before the event ids are drawn (see
 * recorder.ts). The event insert reads from the object insert, so no object
 * means no event. Returns the ids written. One failure (a foreign key: a
 * parent deleted meanwhile) fails every row, and the caller retries them one
 * by one.
 */
/** The statement of insertManyWithKeyAndEvent, its rows read from `input` (id, user_id, key_id, related_id, content, auth_tag, iv, created_at, payload, ord). */
const objectsAndEventsFrom = (input: RawBuilder<unknown>) => sql<{ id: string }>`
    with xact as materialized (select ${transactionId()} as xid),
    input as (${input}),
    created as (
      insert into objects (id, user_id, key_id, related_id, kind, store, content, auth_tag, iv, version, created_at, updated_at)
      select i.id, i.user_id, i.key_id, i.related_id, 'object', null, i.content, i.auth_tag, i.iv, 1, i.created_at, i.created_at
      from xact cross join input i
      where exists (select 1 from store_keys k where k.id = i.key_id and k.user_id = i.user_id)
        and (i.related_id is null or exists (select 1 from objects parent where parent.id = i.related_id and parent.user_id = i.user_id))
      returning id
    ),
    recorded as (
      insert into events (user_id, type, payload, created_at)
      select i.user_id, 'object_created', i.payload, i.created_at from input i join created c on c.id = i.id order by i.ord
    )
    select id from created`;

/**
 * The rows of a batch, one array per column, except what node-postgres would
 * write slowly as array text: the byte columns go as one binary parameter each
 * (see packBytes; in an array a Buffer becomes hex, which the server parses
 * back) and the payloads as one text (see payloadsJoined).
 */
const insertObjectsAndEvents = prepareQuery((db, p) => {
  const bytes = (column: number) =>
    sql`case when i.${sql.raw(`b${column}_len`)} < 0 then null else substring(${p(column)}::bytea from i.${sql.raw(`b${column}_at`)} for i.${sql.raw(`b${column}_len`)}) end`;
  const query = objectsAndEventsFrom(sql`
      select i.id, i.user_id, i.key_id, i.related_id, ${bytes(4)} as content, ${bytes(5)} as auth_tag, ${bytes(6)} as iv, i.created_at, i.payload, i.ord
      from unnest(${p(0)}::text[], ${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(7)}::int[], ${p(8)}::int[], ${p(9)}::int[], ${p(10)}::int[],
          ${p(11)}::int[], ${p(12)}::int[], ${p(13)}::bigint[], string_to_array(${p(14)}::text, chr(30)))
        with ordinality as i(id, user_id, key_id, related_id, b4_at, b4_len, b5_at, b5_len, b6_at, b6_len, created_at, payload, ord)`);
  return { compile: () => query.compile(db) } as Compilable<{ id: string }>;
});

/**
 * A byte column of a batch as one Buffer, with each row's start in it (1-based, as SQL's substring counts) and
 * length; a null has length -1. node-postgres sends a Buffer parameter as binary, where an array of Buffers is
 * written as hex text (2 bytes a byte, on the event loop) for the server to decode.
 */
function packBytes(values: (Buffer | null)[]): [Buffer, number[], number[]] {
  const starts: number[] = [];
  const lengths: number[] = [];
  const parts: Buffer[] = [];
  let at = 1;
  for (const value of values) {
    starts.push(at);
    lengths.push(value === null ? -1 : value.length);
    if (value !== null) {
      parts.push(value);
      at += value.length;
    }
  }
  return [Buffer.concat(parts), starts, lengths];
}

/**
 * The same for one row, its values as plain parameters: node-postgres sends a
 * Buffer parameter as binary, but writes a Buffer inside an array as hex text
 * that the server then parses (a call recording's megabyte became 2 MB of hex
 * on both sides, on the event loop here).
 */
const insertOneObjectAndEvent = prepareQuery((db, p) => {
  const query = objectsAndEventsFrom(sql`
      select ${p(0)}::text as id, ${p(1)}::text as user_id, ${p(2)}::text as key_id, ${p(3)}::text as related_id, ${p(4)}::bytea as content,
        ${p(5)}::bytea as auth_tag, ${p(6)}::bytea as iv, ${p(7)}::bigint as created_at, ${p(8)}::text as payload, 1::bigint as ord`);
  return { compile: () => query.compile(db) } as Compilable<{ id: string }>;
});

/**
 * The batch's event payloads as one text parameter, split by the statement at U+001E: node-postgres writes a text
 * array by escaping each element's quotes and backslashes in JavaScript, and a JSON payload is full of quotes
 * (`escapeElement` was 2.6% of the server's CPU under PUT load). JSON text never holds a raw U+001E (JSON escapes every
 * control character), so the separator cannot occur inside a payload.
 */
function payloadsJoined(items: NewObjectWithEvent[]): string {
  for (const item of items)
    if (item.payloadJson.includes('\u001e')) throw new Error('an event payload holds a raw U+001E: not JSON text');
  return items.map((item) => item.payloadJson).join('\u001e');
}

/** Rows per multi-row INSERT. */
const INSERT_CHUNK_ROWS = 1000;

/** A plain object (kind 'object', version 1) and its object_created payload, for insertManyWithKeyAndEvent. */
export interface NewObjectWithEvent {
  row: ObjectRow;
  payloadJson: string;
}

export class ObjectStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(rows: ObjectRow[]): Promise<void> {
    if (rows.length === 1)
      await insertOneObject.write(
        this.db,
        OBJECT_COLUMNS.map((column) => rows[0][column]),
      );
    // 12 parameters a row: chunks stay far below SQLite's 32,766 bound parameters.
    else
      for (let i = 0; i < rows.length; i += INSERT_CHUNK_ROWS)
        await this.db
          .insertInto('objects')
          .values(rows.slice(i, i + INSERT_CHUNK_ROWS))
          .execute();
  }

  /** Inserts one object if its key_id names a store key of its user_id; false (nothing written) when not. */
  async insertWithKey(row: ObjectRow): Promise<boolean> {
    return (
      (await insertObjectWithKey.write(
        this.db,
        OBJECT_COLUMNS.map((column) => row[column]),
      )) === 1
    );
  }

  /**
   * PostgreSQL only: new plain objects and their object_created events in one
   * statement (see insertObjectsAndEvents); the ids written. A row whose key is
   * not its user's store key, or whose parent is not its user's object, is not
   * written (nor its event).
   */
  async insertManyWithKeyAndEvent(items: NewObjectWithEvent[]): Promise<Set<string>> {
    if (this.dialect !== 'postgres') throw new Error('insertManyWithKeyAndEvent is PostgreSQL only');
    if (items.length === 1) {
      const [{ row, payloadJson }] = items;
      const rows = await insertOneObjectAndEvent.rows(this.db, [
        row.id,
        row.user_id,
        row.key_id,
        row.related_id,
        row.content,
        row.auth_tag,
        row.iv,
        row.created_at,
        payloadJson,
      ]);
      return new Set(rows.map((r) => r.id));
    }
    const column = <T>(pick: (item: NewObjectWithEvent) => T) => items.map(pick);
    const [content, contentAt, contentLength] = packBytes(column((x) => x.row.content));
    const [authTag, authTagAt, authTagLength] = packBytes(column((x) => x.row.auth_tag));
    const [iv, ivAt, ivLength] = packBytes(column((x) => x.row.iv));
    const rows = await insertObjectsAndEvents.rows(this.db, [
      column((x) => x.row.id),
      column((x) => x.row.user_id),
      column((x) => x.row.key_id),
      column((x) => x.row.related_id),
      content,
      authTag,
      iv,
      contentAt,
      contentLength,
      authTagAt,
      authTagLength,
      ivAt,
      ivLength,
      column((x) => x.row.created_at),
      payloadsJoined(items),
    ]);
    return new Set(rows.map((r) => r.id));
  }

  async find(userId: string, id: string): Promise<ObjectRow | undefined> {
    return (await objectOfUser.rows(this.db, [id, userId]))[0];
  }

  /** The objects with these ids, whoever owns them (the caller checks user_id). */
  async findManyById(ids: string[]): Promise<ObjectRow[]> {
    if (this.dialect === 'postgres') return objectsById.rows(this.db, [ids]);
    return objectsByIdSqlite.rows(this.db, [JSON.stringify(ids)]);
  }

  /** The user's children of `parentId`, oldest first, optionally after a cursor row (exclusive). */
  listChildren(
    userId: string,
    parentId: string,
    options: { limit?: number; after?: { created_at: number; id: string } } = {},
  ) {
    let q = this.db
      .selectFrom('objects')
      .selectAll()
      .where('related_id', '=', parentId)
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc');
    if (options.after) q = q.where(childrenAfter(options.after));
    if (options.limit !== undefined) q = q.limit(options.limit);
    return q.execute();
  }

  /**
   * Ids and ciphertext sizes of the user's children of `parentId`, oldest
   * first, after a cursor row (exclusive): what a page will weigh, without
   * reading any ciphertext (SQLite and PostgreSQL take a blob's length from
   * its header, not its bytes).
   */
  listChildSizes(
    userId: string,
    parentId: string,
    options: { limit: number; after?: { created_at: number; id: string } },
  ) {
    let q = this.db
      .selectFrom('objects')
      .select((eb) => [
        'id',
        'created_at',
        sql<number>`length(${eb.ref('content')}) + length(${eb.ref('auth_tag')}) + coalesce(length(${eb.ref('iv')}), 0)`.as(
          'bytes',
        ),
      ])
      .where('related_id', '=', parentId)
      .where('user_id', '=', userId)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc');
    if (options.after) q = q.where(childrenAfter(options.after));
    return q.limit(options.limit).execute();
  }

  /** The user's store containers (children of the root). */
  listStores(userId: string) {
    return this.db
      .selectFrom('objects')
      .select(['id', 'store', 'key_id'])
      .where('user_id', '=', userId)
      .where('kind', '=', sql.lit('store'))
      .execute();
  }

  /** Whether some store container of the user uses this key as its default key. */
  async isStoreDefaultKey(userId: string, keyId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('objects')
      .select('store')
      .where('user_id', '=', userId)
      .where('kind', '=', sql.lit('store'))
      .where('key_id', '=', keyId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Whether `objectId` is `startId` or one of its ancestors. One recursive
   * query walks the parent chain; UNION (not UNION ALL) stops on a repeat.
   */
  async isSelfOrAncestor(userId: string, objectId: string, startId: string): Promise<boolean> {
    const result = await sql<{ id: string }>`
      with recursive chain(id, related_id) as (
        select id, related_id from objects where id = ${startId} and user_id = ${userId}
        union
        select o.id, o.related_id from objects o join chain c on o.id = c.related_id where o.user_id = ${userId}
      )
      select id from chain where id = ${objectId} limit 1`.execute(this.db);
    return result.rows.length > 0;
  }

  /**
   * Serialises re-parenting per user for the rest of the transaction, so two
   * concurrent PATCHes cannot each pass the cycle check and close a loop
   * together. SQLite already runs one write transaction at a time.
   */
  async lockTree(userId: string): Promise<void> {
    await lockForTransaction(this.db, this.dialect, `data-tree:${userId}`);
  }

  /**
   * Replaces the ciphertext and bumps the version in one conditional UPDATE:
   * with `versions` set, only a row still at one of those versions changes, so
   * of many concurrent writers holding the same version exactly one wins.
   */
  update(userId: string, id: string, change: CiphertextChange, versions: number[] | null) {
    let q = this.db
      .updateTable('objects')
      .set((eb) => ({ ...change, version: eb('version', '+', 1) }))
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .where('kind', '=', 'object');
    if (versions !== null) q = versions.length ? q.where('version', 'in', versions) : q.where(sql<boolean>`1 = 0`);
    return q.returningAll().executeTakeFirst();
  }

  /** Clears relatedId on the children of `parentId` (bumping their version); returns them. */
  detachChildren(userId: string, parentId: string, now: number) {
    return this.db
      .updateTable('objects')
      .set((eb) => ({ related_id: null, updated_at: now, version: eb('version', '+', 1) }))
      .where('related_id', '=', parentId)
      .where('user_id', '=', userId)
      .returning(['id', 'key_id', 'version'])
      .execute();
  }

  async delete(userId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('objects')
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
