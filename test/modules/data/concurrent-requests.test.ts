// Requests that arrive together (one query for the reads; on PostgreSQL one statement for the creates,
// on SQLite one commit for the creates) still get their own answers:
// good creates are stored with their event, bad ones get their own error and
// leave nothing behind; a read sees only its own user's object.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import type { NewObjectWithEvent } from '../../../src/modules/data/objects-store.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { createVerifiedUser } from '../../support/factories.js';
import { type Client, client, createKey, createObject, eventsOf, sampleObject } from './support.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('concurrent creates', () => {
  it('answer each request on its own: stored with its event, or refused with nothing written', async () => {
    const alice = await createVerifiedUser(t);
    const bob = await createVerifiedUser(t);
    const a = client(t, alice);
    const b = client(t, bob);
    const [aliceKey, bobKey] = [await createKey(a), await createKey(b)];
    const bobParent = await createObject(b, bobKey);
    const aliceParent = await createObject(a, aliceKey);
    const kinds = Array.from(
      { length: 30 },
      (_, i) => ['good', 'good-child', 'bad-key', 'foreign-parent', 'missing-parent', 'bob'][i % 6],
    );
    const responses = await Promise.all(
      kinds.map((kind) => {
        if (kind === 'good') return a.put('/api/objects', sampleObject(aliceKey));
        if (kind === 'good-child') return a.put('/api/objects', sampleObject(aliceKey, { relatedId: aliceParent.id }));
        if (kind === 'bad-key') return a.put('/api/objects', sampleObject(bobKey));
        if (kind === 'foreign-parent')
          return a.put('/api/objects', sampleObject(aliceKey, { relatedId: bobParent.id }));
        if (kind === 'missing-parent')
          return a.put('/api/objects', sampleObject(aliceKey, { relatedId: newId(Date.now()) }));
        return b.put('/api/objects', sampleObject(bobKey));
      }),
    );
    const expected: Record<string, [number, string | null]> = {
      good: [200, null],
      'good-child': [200, null],
      'bad-key': [400, 'invalid_key'],
      'foreign-parent': [404, 'not_found'],
      'missing-parent': [404, 'not_found'],
      bob: [200, null],
    };
    responses.forEach((res, i) => {
      const [status, code] = expected[kinds[i]];
      expect(res.statusCode, `${kinds[i]}: ${res.body}`).toBe(status);
      if (code) expect(res.json().code).toBe(code);
    });
    // Each stored object has exactly one object_created event, carrying its own content; refused ones have none.
    for (const [user, api, created] of [
      [alice, a, responses.filter((r, i) => r.statusCode === 200 && kinds[i] !== 'bob').map((r) => r.json())],
      [bob, b, responses.filter((_r, i) => kinds[i] === 'bob').map((r) => r.json())],
    ] as const) {
      const events = (await eventsOf(t, user.id, 'object_created')).map((e) => e.payload);
      const objects = await t.database.db
        .selectFrom('objects')
        .select('id')
        .where('user_id', '=', user.id)
        .where('kind', '=', 'object')
        .execute();
      expect(objects).toHaveLength(created.length + 1); // + the parent made first
      expect(events).toHaveLength(created.length + 1);
      for (const object of created) {
        const event = events.find((e) => e.id === object.id);
        expect(event?.content).toBe(object.content);
        expect((await api.get(`/api/objects/${object.id}`)).json().content).toBe(object.content);
      }
    }
  });

  it.runIf(Boolean(process.env.DATABASE_URL))(
    'PostgreSQL: when the shared statement fails, each create is written on its own and answered for itself',
    async () => {
      const user = await createVerifiedUser(t);
      const api = client(t, user);
      const keyId = await createKey(api);
      const item = (id: string): NewObjectWithEvent => ({
        row: {
          id,
          user_id: user.id,
          key_id: keyId,
          related_id: null,
          kind: 'object',
          store: null,
          content: randomBytes(8),
          auth_tag: randomBytes(16),
          iv: null,
          version: 1,
          created_at: 1,
          updated_at: 1,
        },
        payloadJson: JSON.stringify({ id }),
      });
      const id = newId(Date.now());
      const other = newId(Date.now());
      // The same id twice makes the one statement fail (unique key); alone, one twin and the third succeed.
      const writeCreates = (t.services as any).data.objects.writeCreates.bind((t.services as any).data.objects);
      const outcomes = await writeCreates([item(id), item(id), item(other)]);
      // Written one by one (concurrently): one of the twins wins, the other gets its own error.
      const twins = outcomes.slice(0, 2);
      expect(twins.filter((o: any) => o.ok && o.value === true)).toHaveLength(1);
      expect(String(twins.find((o: any) => !o.ok).error)).toMatch(/duplicate key/);
      expect(outcomes[2]).toEqual({ ok: true, value: true });
      const events = await eventsOf(t, user.id, 'object_created');
      expect(events.map((e) => e.payload.id).sort()).toEqual([id, other].sort());
    },
  );

  it("reads: each gets its own object, and another user's or a missing id is 404", async () => {
    const alice = await createVerifiedUser(t);
    const bob = await createVerifiedUser(t);
    const a = client(t, alice);
    const b = client(t, bob);
    const mine = await Promise.all(Array.from({ length: 5 }, async () => createObject(a, await createKey(a))));
    const bobs = await createObject(b, await createKey(b));
    type Ask = [Client, string, number];
    const asks: Ask[] = [
      ...mine.map((o): Ask => [a, o.id, 200]),
      [a, bobs.id, 404],
      [b, bobs.id, 200],
      [a, mine[0].id, 200],
      [a, newId(Date.now()), 404],
      [b, mine[1].id, 404],
    ];
    const responses = await Promise.all(asks.map(([api, id]) => api.get(`/api/objects/${id}`)));
    responses.forEach((res, i) => {
      const [, id, status] = asks[i];
      expect(res.statusCode, `${i}: ${res.body}`).toBe(status);
      if (status === 200)
        expect(res.json()).toEqual(
          expect.objectContaining({
            id,
            content: ([...mine, bobs] as Array<{ id: string; content?: string }>).find((o) => o.id === id)!.content,
          }),
        );
      else expect(res.json().code).toBe('not_found');
    });
  });
});
