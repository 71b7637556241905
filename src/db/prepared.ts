// Hot-path queries built and compiled once, then run with new parameters.
// Building and compiling a Kysely query costs more than running a point query
// on SQLite (measured ~15–35 µs against ~8 µs), so the few queries every request
// makes (session, API key, object read and write) skip that work.
import { type Compilable, CompiledQuery, type InferResult, type Kysely } from 'kysely';
import type { Database } from './schema.js';

const SENTINEL = '\u0000param-';

/**
 * The SQL text of every compiled hot query, with a statement name. On
 * PostgreSQL the pool's clients send these as named prepared statements
 * (see namePreparedStatements in database.ts), so the server parses and plans
 * each once per connection instead of on every request. A fixed set: only
 * queries declared with prepareQuery are in it.
 */
export const statementNames = new Map<string, string>();

/** A placeholder for the i-th argument, used while building the query once. */
export type Param = <T = string>(index: number) => T;

type Slot = number | { value: unknown };

/**
 * SQLite: runs SQL text straight on the connection (the statement cache of
 * database.ts), registered per Kysely instance by openDatabase. Used only
 * inside a transaction: the transaction holds SQLite's one connection, so a
 * statement run directly is in it, and Kysely's executor (a connection
 * provider, a promise chain and a result copy per query; about a third of a
 * grouped create's statements' cost) has nothing to add. Also what a group
 * commit on the connection waits for before a batch (the WAL checkpointer's
 * barrier, checkpointer.ts).
 */
export interface SqliteRunner {
  all(sql: string, parameters: readonly unknown[]): unknown[];
  run(sql: string, parameters: readonly unknown[]): number;
  /** Before a group commit's batch: null to write now, else a promise to wait for first. */
  writeBarrier(): Promise<void> | null;
}

const sqliteRunners = new WeakMap<object, SqliteRunner>();

/** Lets queries on `db`'s transactions run directly on its SQLite connection (openDatabase calls it). */
export function registerSqliteRunner(db: Kysely<any>, runner: SqliteRunner): void {
  sqliteRunners.set(db.getExecutor().adapter, runner);
}

/** The runner of `db`'s SQLite connection (undefined on PostgreSQL): its Kysely instance or one of its transactions. */
export const sqliteRunnerOf = (db: Kysely<any>): SqliteRunner | undefined =>
  sqliteRunners.get(db.getExecutor().adapter);

/** The direct runner when `db` is a transaction on SQLite (its executor shares the adapter of its Kysely instance). */
const directRunner = (db: Kysely<any>): SqliteRunner | undefined => (db.isTransaction ? sqliteRunnerOf(db) : undefined);

/**
 * Runs one parameterless statement (a savepoint, say) on `db`: directly inside
 * a SQLite transaction, and then synchronously (undefined: nothing to await,
 * no promise made), else through Kysely (a promise).
 */
export function runStatement(db: Kysely<any>, sql: string): Promise<void> | undefined {
  const direct = directRunner(db);
  if (!direct) return db.executeQuery(CompiledQuery.raw(sql)).then(() => undefined);
  direct.run(sql, []);
  return undefined;
}

export interface PreparedQuery<Row> {
  /** Runs the query on `db` (the handle or a transaction) with the arguments in param order; returns its rows. */
  rows(db: Kysely<any>, args: unknown[]): Promise<Row[]>;
  /** Runs an insert, update or delete; returns how many rows it changed. */
  write(db: Kysely<any>, args: unknown[]): Promise<number>;
}

/**
 * Declares a query once: `build(db, param)` is compiled the first time it
 * runs on a dialect, each `param(i)` becoming the i-th argument; values written
 * literally in the builder stay constant.
 */
export function prepareQuery<Q extends Compilable<any>>(
  build: (db: Kysely<Database>, param: Param) => Q,
): PreparedQuery<InferResult<Q> extends (infer R)[] ? R : never> {
  // One compiled form per dialect adapter (SQLite and PostgreSQL differ in placeholders).
  const byAdapter = new Map<unknown, { sql: string; slots: Slot[] }>();
  const param: Param = (<T>(i: number) => `${SENTINEL}${i}` as T) as Param;

  const compiledFor = (db: Kysely<any>) => {
    const adapter = db.getExecutor().adapter.constructor;
    let compiled = byAdapter.get(adapter);
    if (!compiled) {
      const query = build(db as Kysely<Database>, param).compile();
      const slots = query.parameters.map(
        (value): Slot =>
          typeof value === 'string' && value.startsWith(SENTINEL) ? Number(value.slice(SENTINEL.length)) : { value },
      );
      compiled = { sql: query.sql, slots };
      byAdapter.set(adapter, compiled);
      if (!statementNames.has(query.sql)) statementNames.set(query.sql, `ws_hot_${statementNames.size + 1}`);
    }
    return compiled;
  };
  const parametersOf = (compiled: { slots: Slot[] }, args: unknown[]) =>
    compiled.slots.map((slot) => (typeof slot === 'number' ? args[slot] : slot.value));
  const toQuery = (db: Kysely<any>, args: unknown[]) => {
    const compiled = compiledFor(db);
    return CompiledQuery.raw(compiled.sql, parametersOf(compiled, args));
  };

  return {
    async rows(db, args) {
      const direct = directRunner(db);
      if (direct) {
        const compiled = compiledFor(db);
        return direct.all(compiled.sql, parametersOf(compiled, args)) as any[];
      }
      return (await db.executeQuery(toQuery(db, args))).rows as any[];
    },
    async write(db, args) {
      const direct = directRunner(db);
      if (direct) {
        const compiled = compiledFor(db);
        return direct.run(compiled.sql, parametersOf(compiled, args));
      }
      return Number((await db.executeQuery(toQuery(db, args))).numAffectedRows ?? 0);
    },
  };
}
