// The dialer's sweep reads only the contacts calling (migration 550's partial
// index campaign_contacts_calling), on both databases: the plans of the two
// queries it runs every 15 s name the index.
import { CompiledQuery, type Kysely, type OperationNode } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../src/db/schema.js';
import { CampaignStore } from '../../../src/modules/campaigns/store.js';
import { type TestApp, createTestApp } from '../../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** The statements `run` sends through a store over `db`, compiled as they are sent. */
async function statementsOf(run: (store: CampaignStore) => Promise<unknown>): Promise<CompiledQuery[]> {
  const db = t.database.db as Kysely<Database>;
  const nodes: OperationNode[] = [];
  const capturing = db.withPlugin({
    transformQuery: ({ node }) => {
      nodes.push(node);
      return node;
    },
    transformResult: async ({ result }) => result,
  });
  await run(new CampaignStore(capturing, t.database.dialect));
  return nodes.map((node, i) => db.getExecutor().compileQuery(node as never, { queryId: `sweep-${i}` }));
}

/** The plan's text: SQLite's EXPLAIN QUERY PLAN details, PostgreSQL's EXPLAIN with sequential scans priced out. */
async function planOf(query: CompiledQuery): Promise<string> {
  const db = t.database.db as Kysely<Database>;
  if (t.database.dialect === 'sqlite') {
    const { rows } = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
    );
    return rows.map((r) => r.detail).join('\n');
  }
  // A near-empty table is cheapest to scan whole; with that priced out, the plan shows whether the index applies.
  return db.transaction().execute(async (trx) => {
    await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain ${query.sql}`, [...query.parameters]),
    );
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

describe("the dialer's sweep", () => {
  it('returns expired claims and finds long calls through the partial index of the contacts calling', async () => {
    const now = Date.now();
    const statements = await statementsOf(async (store) => {
      await store.returnExpiredClaims(now);
      await store.longCalling(now - 300_000, 100);
    });
    expect(statements).toHaveLength(2);
    for (const statement of statements) {
      const plan = await planOf(statement);
      expect(plan, `${statement.sql}\n${plan}`).toContain('campaign_contacts_calling');
    }
  });
});
