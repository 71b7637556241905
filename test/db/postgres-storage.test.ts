// PostgreSQL: an object of a few KiB and its object_created event are stored
// inline and whole (no TOAST rows, no compression attempt); a longer value
// goes out of line, uncompressed (migration 20261126_300_inline_ciphertext).
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, createTestApp } from '../support/app.js';
import { createVerifiedUser } from '../support/factories.js';
import { client, createKey } from '../modules/data/support.js';

describe.runIf(Boolean(process.env.DATABASE_URL))('PostgreSQL storage of ciphertext', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const toastBytes = async (table: string) =>
    Number(
      (
        await sql<{
          bytes: string;
        }>`select pg_relation_size(reltoastrelid) as bytes from pg_class where oid = ${table}::regclass`.execute(
          t.database.db,
        )
      ).rows[0]!.bytes,
    );

  it('keeps objects up to a few KiB and their events inline; a larger one goes out of line uncompressed', async () => {
    const api = client(t, await createVerifiedUser(t));
    const keyId = await createKey(api);
    const put = (bytes: number) =>
      api.put('/api/objects', {
        keyId,
        content: randomBytes(bytes).toString('base64'),
        authTag: randomBytes(16).toString('base64'),
        iv: randomBytes(12).toString('base64'),
      });
    for (const bytes of [1024, 1024, 3000]) expect((await put(bytes)).statusCode).toBe(200);
    expect(await toastBytes('events')).toBe(0);
    expect(await toastBytes('objects')).toBe(0);

    const large = await put(20_000);
    expect(large.statusCode).toBe(200);
    expect(await toastBytes('objects')).toBeGreaterThan(0);
    const stored = (
      await sql<{
        size: number;
        length: number;
      }>`select pg_column_size(content) as size, octet_length(content) as length from objects where id = ${large.json().id}`.execute(
        t.database.db,
      )
    ).rows[0]!;
    expect(Number(stored.size)).toBeGreaterThanOrEqual(Number(stored.length));
  });
});
