// A worker thread of AnalyticsReaders: its own read-only connection to the
// SQLite file, with the analytics fold defined on it, runs the fold queries
// it is sent and answers their folded JSON text. A read sees what was
// committed when it began (WAL), never blocks the server's writer, and keeps
// the fold's CPU off the event loop that answers every other request.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';
import { sqliteDriverPath } from '../../db/load-sqlite.js';
import { ANALYTICS_FOLD, analyticsFold } from './analytics-fold.js';

export interface FoldRequest {
  id: number;
  sql: string;
  parameters: unknown[];
}

export type FoldAnswer = { id: number; folded: string } | { id: number; error: string };

const Database = createRequire(import.meta.url)(sqliteDriverPath()) as typeof SQLite;
const db = new Database((workerData as { file: string }).file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.aggregate(ANALYTICS_FOLD, analyticsFold as unknown as SQLite.AggregateOptions);

/** Prepared statements by text, the most recent few (a text differs by the day grouping's inlined offsets). */
const statements = new Map<string, SQLite.Statement>();
const STATEMENTS_KEPT = 32;

function prepared(text: string): SQLite.Statement {
  let statement = statements.get(text);
  if (statement) statements.delete(text);
  else statement = db.prepare(text);
  statements.set(text, statement);
  if (statements.size > STATEMENTS_KEPT) statements.delete(statements.keys().next().value!);
  return statement;
}

parentPort!.on('message', ({ id, sql, parameters }: FoldRequest) => {
  let answer: FoldAnswer;
  try {
    // An aggregate query has one row, the fold's JSON text even over no calls (analyticsFold.result).
    answer = { id, folded: (prepared(sql).get(parameters) as { folded: string }).folded };
  } catch (error) {
    answer = { id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
