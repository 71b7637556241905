// The README's quickstart, run as a newcomer would (npx tsx) against a
// listening server: every step prints, and the contact it stored is really
// there, encrypted, for the user it registered.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ListeningApp, runNpx, startServer } from './support.js';

let server: ListeningApp;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

it('sdk/examples/quickstart.ts registers, verifies, creates a contact, receives its event and decrypts it', async () => {
  const { code, stdout, stderr } = await runNpx(['tsx', 'sdk/examples/quickstart.ts'], { BASE_URL: server.baseUrl });
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });

  const lines = stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^1\. registered (\S+@example\.com) — status phone_not_verified$/);
  expect(lines[1]).toMatch(/^2\. verified \+1555\d{7} with code \d{6} — status ok$/);
  expect(lines[2]).toMatch(/^3\. contacts store \S+, key \S+$/);
  expect(lines[3]).toBe('4. subscribed to object_created events of the contacts store');
  const id = /^5\. created contact (\S+) \(version 1\)$/.exec(lines[4])?.[1];
  expect(id).toBeDefined();
  expect(lines[5]).toMatch(
    /^6\. received object_created #\d+: \{"name":"Grace Hopper","email":"grace@example\.com","phone":"\+14155550123"\}$/,
  );
  expect(lines[6]).toMatch(/^7\. stored ciphertext [0-9a-f]{32}… \(tag [0-9a-f]{32}, iv [0-9a-f]{24}\)$/);
  expect(lines[7]).toBe('   decrypted: {"name":"Grace Hopper","email":"grace@example.com","phone":"+14155550123"}');
  expect(lines[8]).toBe('done');

  // The object is the new user's, a child of their contacts store, and holds no plaintext.
  const email = /registered (\S+) —/.exec(lines[0])![1];
  const user = await server.t.database.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  const row = await server.t.database.db
    .selectFrom('objects')
    .selectAll()
    .where('id', '=', id!)
    .executeTakeFirstOrThrow();
  expect(row.user_id).toBe(user.id);
  expect(Buffer.from(row.content).toString('utf8')).not.toContain('Grace');
  const store = await server.t.database.db
    .selectFrom('objects')
    .select('store')
    .where('id', '=', row.related_id!)
    .executeTakeFirstOrThrow();
  expect(store.store).toBe('contacts');
});
