// `pg` and its type parsers load only when PostgreSQL is configured, so the
// embedded default does not carry the driver in memory.
import { createRequire } from 'node:module';
import type pg from 'pg';

let loaded: typeof pg | null = null;

export function loadPg(): typeof pg {
  if (!loaded) {
    loaded = createRequire(import.meta.url)('pg') as typeof pg;
    // int8 (bigint) columns hold epoch milliseconds and counters well inside
    // Number's safe range; parse them as numbers instead of strings.
    loaded.types.setTypeParser(20, (v) => Number(v));
  }
  return loaded;
}
