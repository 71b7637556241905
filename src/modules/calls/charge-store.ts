// SQL of call charges (calls/charges.ts). A charge is inserted only when the
// user's charges are still as they were when its terms were worked out (the
// counts of open and closed charges), so two starts can never both take the
// last concurrency slot or the same allowance seconds: on SQLite the
// conditional insert is one statement, and SQLite runs one writer at a time;
// on PostgreSQL it runs under a per-user advisory lock, which makes the check
// and the insert one step for every instance on the database.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { CallChargesTable } from './tables.js';
import { lockForTransaction } from '../../db/transaction-lock.js';

/** The `direction` of a dialled leg's charge (charges.ts authorizeLeg): not a call of the plan (no allowance, no usage), paid from the balance. */
export const LEG_DIRECTION = 'leg';

/** What the user's charges look like now: the version a new charge is checked against. */
export interface ChargeSnapshot {
  open: number;
  closed: number;
  /** Open charges per direction: how many, allowance seconds set aside, included calls set aside. */
  byDirection: Record<string, { open: number; allowanceSeconds: number; allowanceCalls: number }>;
}

export class CallChargeStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async snapshot(userId: string): Promise<ChargeSnapshot> {
    const rows = await this.db
      .selectFrom('call_charges')
      .select([
        'direction',
        sql<string>`case when state = 'open' then 'open' else 'closed' end`.as('kind'),
        sql<number>`count(*)`.as('n'),
        sql<number>`coalesce(sum(allowance_seconds), 0)`.as('seconds'),
        sql<number>`coalesce(sum(allowance_call), 0)`.as('calls'),
      ])
      .where('user_id', '=', userId)
      .groupBy(['direction', sql`case when state = 'open' then 'open' else 'closed' end`])
      .execute();
    const snap: ChargeSnapshot = { open: 0, closed: 0, byDirection: {} };
    for (const r of rows) {
      const n = Number(r.n);
      if (r.kind === 'closed') {
        snap.closed += n;
        continue;
      }
      snap.open += n;
      snap.byDirection[r.direction] = { open: n, allowanceSeconds: Number(r.seconds), allowanceCalls: Number(r.calls) };
    }
    return snap;
  }

  /** Inserts the charge when the user's open and closed counts are still those of `seen`; true when inserted. */
  async insertIfUnchanged(row: CallChargesTable, seen: Pick<ChargeSnapshot, 'open' | 'closed'>): Promise<boolean> {
    const insert = (db: Kysely<Database>) =>
      sql`
      insert into call_charges (ref, user_id, direction, country, rate, max_seconds, allowance_seconds, allowance_call, hold_cents, state, seconds, charged_cents, created_at, settled_at)
      select ${row.ref}, ${row.user_id}, ${row.direction}, ${row.country}, ${row.rate}, ${row.max_seconds}, ${row.allowance_seconds}, ${row.allowance_call}, ${row.hold_cents}, ${row.state}, null, null, cast(${row.created_at} as bigint), null
      where (select count(*) from call_charges where user_id = ${row.user_id} and state = 'open') = ${seen.open}
        and (select count(*) from call_charges where user_id = ${row.user_id} and state <> 'open') = ${seen.closed}
      on conflict (ref) do nothing`.execute(db);
    if (this.dialect === 'sqlite') return Number((await insert(this.db)).numAffectedRows ?? 0n) === 1;
    return this.db.transaction().execute(async (trx) => {
      await lockForTransaction(trx, this.dialect, `call-charges:${row.user_id}`);
      return Number((await insert(trx)).numAffectedRows ?? 0n) === 1;
    });
  }

  /** Open charges created before `before` whose call session was never recorded (its start stopped in between); dialled legs have their own sweep. */
  async listOrphans(before: number, limit: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom('call_charges as c')
      .select('c.ref')
      .where('c.state', '=', 'open')
      .where('c.created_at', '<', before)
      .where('c.direction', '<>', LEG_DIRECTION)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('call_sessions as s').select('s.id').whereRef('s.id', '=', 'c.ref'))),
      )
      .orderBy('c.created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => r.ref);
  }

  /** Dialled legs (charges.ts authorizeLeg) still open that were authorized before `before`: their carrier never reported their end. */
  async listOpenLegs(
    before: number,
    limit: number,
  ): Promise<Array<{ ref: string; maxSeconds: number; dialled: boolean }>> {
    const rows = await this.db
      .selectFrom('call_charges')
      .select(['ref', 'max_seconds', 'dialled_at'])
      .where('state', '=', 'open')
      .where('direction', '=', LEG_DIRECTION)
      .where('created_at', '<', before)
      .orderBy('created_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      ref: r.ref,
      maxSeconds: Number(r.max_seconds),
      dialled: r.dialled_at !== null && r.dialled_at !== undefined,
    }));
  }

  /** The carrier took the leg's redirect: from now on the leg may be talking. */
  async markDialled(ref: string, now: number): Promise<void> {
    await this.db
      .updateTable('call_charges')
      .set({ dialled_at: now })
      .where('ref', '=', ref)
      .where('dialled_at', 'is', null)
      .execute();
  }

  find(ref: string): Promise<CallChargesTable | undefined> {
    return this.db.selectFrom('call_charges').selectAll().where('ref', '=', ref).executeTakeFirst();
  }

  /** Closes an open charge with its outcome (once); true for the caller that closed it. */
  async close(
    ref: string,
    outcome: {
      state: 'settled' | 'refused';
      seconds: number;
      chargedCents: number;
      allowanceSeconds: number;
      now: number;
    },
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('call_charges')
      .set({
        state: outcome.state,
        seconds: outcome.seconds,
        charged_cents: outcome.chargedCents,
        allowance_seconds: outcome.allowanceSeconds,
        settled_at: outcome.now,
      })
      .where('ref', '=', ref)
      .where('state', '=', 'open')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** What the settled calls among `ids` were charged, in cents (calls never charged, such as web calls, have no row). */
  async chargedCents(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('call_charges')
      .select(['ref', 'charged_cents'])
      .where('ref', 'in', ids)
      .where('state', '=', 'settled')
      .execute();
    return new Map(rows.map((row) => [row.ref, Number(row.charged_cents ?? 0)]));
  }
}
