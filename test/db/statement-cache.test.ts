import { describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/db/database.js';
import { loadSqlite } from '../../src/db/load-sqlite.js';

describe('withStatementCache', () => {
  it('reuses a statement per SQL text and keeps at most `capacity`, dropping the least recently used', () => {
    const sqlite = new (loadSqlite())(':memory:');
    const cached = withStatementCache(sqlite, 2);
    const a = cached.prepare('select 1 as v');
    expect(cached.prepare('select 1 as v')).toBe(a);
    const b = cached.prepare('select 2 as v');
    cached.prepare('select 1 as v'); // a is now the most recent
    cached.prepare('select 3 as v'); // evicts b
    expect(cached.prepare('select 1 as v')).toBe(a);
    expect(cached.prepare('select 2 as v')).not.toBe(b);
    expect(cached.prepare('select 2 as v').get()).toEqual({ v: 2 });
    cached.close();
    expect(sqlite.open).toBe(false);
  });
});
