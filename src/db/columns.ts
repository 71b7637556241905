// Column types that differ between SQLite and PostgreSQL. Timestamps are
// epoch milliseconds (bigint), booleans are 0/1 integers, bytes are BLOB/bytea,
// so rows look the same in both dialects.
import { type ColumnDataType, type Expression, sql } from 'kysely';
import type { Dialect } from './database.js';

export const bytesType = (dialect: Dialect): ColumnDataType => (dialect === 'postgres' ? 'bytea' : 'blob');

/** An auto-incrementing integer primary key (event ids and other ordered logs). */
export const serialType = (dialect: Dialect): Expression<unknown> | ColumnDataType =>
  dialect === 'postgres' ? sql`bigserial` : 'integer';
