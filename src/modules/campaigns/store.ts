// SQL of campaigns, their contacts and attempts. The dialer's claim is one
// transaction on the campaign's row: PostgreSQL locks that row (an instance
// that finds it locked skips the campaign this round: another is deciding),
// counts the calls under way, takes the pacing slots that are due and claims
// that many due contacts with a conditional UPDATE that skips rows locked by
// anyone else (the shape of WebhookStore.claimDue); SQLite runs one write
// transaction at a time, so the same statements are atomic there.
import { type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type {
  CampaignAttemptsTable,
  CampaignContactsTable,
  CampaignStatus,
  CampaignsTable,
  ContactStatus,
} from './tables.js';

const CONTACT_INSERT_CHUNK = 500;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
function campaignRow(r: CampaignsTable): CampaignsTable {
  return {
    ...r,
    calls_per_minute: Number(r.calls_per_minute),
    max_concurrent: Number(r.max_concurrent),
    next_dial_at: Number(r.next_dial_at),
    budget_cents: num(r.budget_cents),
    spent_cents: Number(r.spent_cents),
    attempts: Number(r.attempts),
    changed_at: Number(r.changed_at),
    status_event_at: Number(r.status_event_at),
    created_at: Number(r.created_at),
    started_at: num(r.started_at),
    ended_at: num(r.ended_at),
  };
}
function contactRow(r: CampaignContactsTable): CampaignContactsTable {
  return {
    ...r,
    idx: Number(r.idx),
    attempt_count: Number(r.attempt_count),
    next_attempt_at: Number(r.next_attempt_at),
    claimed_until: num(r.claimed_until),
    updated_at: Number(r.updated_at),
  };
}

/** What the dialer decides inside the claim, from the locked campaign and its due contacts. */
export interface ClaimPlan {
  /** Contacts to claim now, by index (at most the slots due). */
  claim: number[];
  /** Contacts moved to later (outside business hours): index and next attempt time. */
  later: Array<{ idx: number; at: number }>;
  /** Contacts that will never be dialled (on the do-not-call list). */
  never: number[];
}

export class CampaignStore {
  constructor(
    readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(campaign: CampaignsTable, contacts: CampaignContactsTable[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('campaigns').values(campaign).execute();
      for (let i = 0; i < contacts.length; i += CONTACT_INSERT_CHUNK)
        await trx
          .insertInto('campaign_contacts')
          .values(contacts.slice(i, i + CONTACT_INSERT_CHUNK))
          .execute();
    });
  }

  async setObjectId(id: string, objectId: string): Promise<void> {
    await this.db.updateTable('campaigns').set({ object_id: objectId }).where('id', '=', id).execute();
  }

  async find(id: string): Promise<CampaignsTable | undefined> {
    const row = await this.db.selectFrom('campaigns').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? campaignRow(row) : undefined;
  }

  /** Newest first, before the id `before`. */
  async listForUser(userId: string, before: string | null, limit: number): Promise<CampaignsTable[]> {
    let q = this.db.selectFrom('campaigns').selectAll().where('user_id', '=', userId);
    if (before !== null) q = q.where('id', '<', before);
    return (await q.orderBy('id', 'desc').limit(limit).execute()).map(campaignRow);
  }

  /** Contacts per status, per campaign. */
  async counts(ids: string[]): Promise<Map<string, Map<ContactStatus, number>>> {
    const out = new Map<string, Map<ContactStatus, number>>(ids.map((id) => [id, new Map()]));
    if (ids.length === 0) return out;
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select(['campaign_id', 'status', (eb) => eb.fn.countAll<number>().as('n')])
      .where('campaign_id', 'in', ids)
      .groupBy(['campaign_id', 'status'])
      .execute();
    for (const r of rows) out.get(r.campaign_id)!.set(r.status, Number(r.n));
    return out;
  }

  /** Moves the status when it is one of `from`; true when moved. */
  async move(
    id: string,
    from: CampaignStatus[],
    to: CampaignStatus,
    set: Partial<Pick<CampaignsTable, 'reason' | 'started_at' | 'ended_at' | 'next_dial_at'>>,
    now: number,
    db: Kysely<Database> = this.db,
  ): Promise<boolean> {
    const result = await db
      .updateTable('campaigns')
      .set({ status: to, changed_at: now, ...set })
      .where('id', '=', id)
      .where('status', 'in', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(work);
  }

  async delete(id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('campaign_attempts').where('campaign_id', '=', id).execute();
      await trx.deleteFrom('campaign_contacts').where('campaign_id', '=', id).execute();
      await trx.deleteFrom('campaigns').where('id', '=', id).execute();
    });
  }

  async listContacts(
    campaignId: string,
    status: ContactStatus | null,
    afterIdx: number,
    limit: number,
  ): Promise<CampaignContactsTable[]> {
    let q = this.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('idx', '>', afterIdx);
    if (status) q = q.where('status', '=', status);
    return (await q.orderBy('idx').limit(limit).execute()).map(contactRow);
  }

  async findContact(campaignId: string, idx: number): Promise<CampaignContactsTable | undefined> {
    const row = await this.db
      .selectFrom('campaign_contacts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('idx', '=', idx)
      .executeTakeFirst();
    return row ? contactRow(row) : undefined;
  }

  async attemptsOf(campaignId: string, idxs: number[]): Promise<CampaignAttemptsTable[]> {
    if (idxs.length === 0) return [];
    const rows = await this.db
      .selectFrom('campaign_attempts')
      .selectAll()
      .where('campaign_id', '=', campaignId)
      .where('idx', 'in', idxs)
      .orderBy('idx')
      .orderBy('attempt')
      .execute();
    return rows.map((r) => ({ ...r, idx: Number(r.idx), attempt: Number(r.attempt), at: Number(r.at) }));
  }

  async findAttempt(sessionId: string): Promise<CampaignAttemptsTable | undefined> {
    return this.db.selectFrom('campaign_attempts').selectAll().where('session_id', '=', sessionId).executeTakeFirst();
  }

  async runningIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('campaigns').select('id').where('status', '=', 'running').execute();
    return rows.map((r) => r.id);
  }

  /**
   * One round of the dialer for a running campaign: locks its row (skipped
   * when another instance holds it), works out the slots free now (pacing
   * slots due, capped by the calls under way against max_concurrent and by
   * `maxBatch`), lets `plan` choose among up to twice that many due contacts
   * (told which of them are on the owner's do-not-call list; it must not
   * touch the database: the transaction holds SQLite's one connection),
   * claims the chosen ones for `instanceId` until `leaseUntil` and moves the
   * pacing slot on by as many. Returns the claimed contacts (their attempt
   * count already raised), or null when the campaign was not running or was
   * locked.
   */
  async claim(
    campaignId: string,
    input: { instanceId: string; now: number; leaseUntil: number; maxBatch: number; burstMs: number },
    plan: (campaign: CampaignsTable, due: CampaignContactsTable[], slots: number, listed: Set<string>) => ClaimPlan,
  ): Promise<{ campaign: CampaignsTable; claimed: CampaignContactsTable[] } | null> {
    const { now } = input;
    const lock = this.dialect === 'postgres' ? sql` for update skip locked` : sql``;
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<CampaignsTable>`
        select * from campaigns where id = ${campaignId} and status = 'running'${lock}`.execute(trx);
      if (!rows[0]) return null;
      const campaign = campaignRow(rows[0]);
      const interval = 60_000 / campaign.calls_per_minute;
      // The slot pointer never lags more than a burst behind: time nobody dialled in is not made up later.
      const base = Math.max(campaign.next_dial_at, now - input.burstMs);
      const paced = base <= now ? Math.floor((now - base) / interval) + 1 : 0;
      if (paced === 0) return { campaign, claimed: [] };
      const calling = await trx
        .selectFrom('campaign_contacts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('campaign_id', '=', campaignId)
        .where('status', '=', 'calling')
        .executeTakeFirstOrThrow();
      const slots = Math.min(paced, campaign.max_concurrent - Number(calling.n), input.maxBatch);
      if (slots <= 0) return { campaign, claimed: [] };
      const due = (
        await trx
          .selectFrom('campaign_contacts')
          .selectAll()
          .where('campaign_id', '=', campaignId)
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .orderBy('next_attempt_at')
          .orderBy('idx')
          .limit(slots * 2)
          .execute()
      ).map(contactRow);
      if (due.length === 0) return { campaign, claimed: [] };
      // The do-not-call list read in the same transaction (SQLite has one connection: a read beside it would wait for it).
      const listed = new Set(
        (
          await trx
            .selectFrom('do_not_call')
            .select('phone')
            .where('user_id', '=', campaign.user_id)
            .where('phone', 'in', [...new Set(due.map((c) => c.phone))])
            .execute()
        ).map((r) => r.phone),
      );
      const decided = plan(campaign, due, slots, listed);
      for (const { idx, at } of decided.later)
        await trx
          .updateTable('campaign_contacts')
          .set({ next_attempt_at: at, updated_at: now })
          .where('campaign_id', '=', campaignId)
          .where('idx', '=', idx)
          .where('status', '=', 'pending')
          .execute();
      if (decided.never.length)
        await trx
          .updateTable('campaign_contacts')
          .set({ status: 'do_not_call', updated_at: now })
          .where('campaign_id', '=', campaignId)
          .where('idx', 'in', decided.never)
          .where('status', '=', 'pending')
          .execute();
      const chosen = decided.claim.slice(0, slots);
      let claimed: CampaignContactsTable[] = [];
      if (chosen.length) {
        const ids = sql.join(chosen.map((i) => sql`${i}`));
        const result = await sql<CampaignContactsTable>`
          update campaign_contacts
             set status = 'calling', claimed_by = ${input.instanceId}, claimed_until = ${input.leaseUntil},
                 attempt_count = attempt_count + 1, session_id = null, updated_at = ${now}
           where campaign_id = ${campaignId}
             and idx in (select idx from campaign_contacts
                          where campaign_id = ${campaignId} and idx in (${ids}) and status = 'pending'${lock})
             and status = 'pending'
          returning *`.execute(trx);
        claimed = result.rows.map(contactRow);
      }
      const moved = claimed.length || decided.later.length || decided.never.length;
      await trx
        .updateTable('campaigns')
        .set({
          next_dial_at: base + claimed.length * interval,
          ...(moved ? { changed_at: now } : {}),
        })
        .where('id', '=', campaignId)
        .execute();
      return { campaign, claimed };
    });
  }

  /** The claimed contact's call was recorded: the claim's lease ends (the call now decides), and the attempt is kept. */
  async attach(campaignId: string, idx: number, instanceId: string, sessionId: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('campaign_contacts')
        .set({ session_id: sessionId, claimed_until: null, updated_at: now })
        .where('campaign_id', '=', campaignId)
        .where('idx', '=', idx)
        .where('status', '=', 'calling')
        .where('claimed_by', '=', instanceId)
        .where('session_id', 'is', null)
        .returning('attempt_count')
        .executeTakeFirst();
      if (!result) return false;
      await trx
        .insertInto('campaign_attempts')
        .values({
          session_id: sessionId,
          campaign_id: campaignId,
          idx,
          attempt: Number(result.attempt_count),
          outcome: null,
          at: now,
        })
        .execute();
      await trx
        .updateTable('campaigns')
        .set((eb) => ({ attempts: eb('attempts', '+', 1), changed_at: now }))
        .where('id', '=', campaignId)
        .execute();
      return true;
    });
  }

  /** A claim whose call was never recorded goes back (`attemptBack`: the attempt did not happen) or ends. */
  async release(
    campaignId: string,
    idx: number,
    instanceId: string,
    to: { status: ContactStatus; nextAttemptAt: number; attemptBack: boolean },
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('campaign_contacts')
      .set((eb) => ({
        status: to.status,
        next_attempt_at: to.nextAttemptAt,
        claimed_by: null,
        claimed_until: null,
        updated_at: now,
        ...(to.attemptBack ? { attempt_count: eb('attempt_count', '-', 1) } : {}),
      }))
      .where('campaign_id', '=', campaignId)
      .where('idx', '=', idx)
      .where('status', '=', 'calling')
      .where('claimed_by', '=', instanceId)
      .where('session_id', 'is', null)
      .execute();
    await this.touch(campaignId, now);
  }

  async touch(campaignId: string, now: number): Promise<void> {
    await this.db.updateTable('campaigns').set({ changed_at: now }).where('id', '=', campaignId).execute();
  }

  /**
   * The attempt's call ended: its outcome kept, the contact moved to `to`,
   * its cost added to the campaign's spend; once (false when the attempt was
   * finished before: another instance, a retried listener).
   */
  async finishAttempt(
    sessionId: string,
    outcome: string,
    to: { status: ContactStatus; nextAttemptAt: number },
    chargedCents: number,
    now: number,
  ): Promise<CampaignAttemptsTable | null> {
    return this.db.transaction().execute(async (trx) => {
      const attempt = await trx
        .updateTable('campaign_attempts')
        .set({ outcome })
        .where('session_id', '=', sessionId)
        .where('outcome', 'is', null)
        .returningAll()
        .executeTakeFirst();
      if (!attempt) return null;
      await trx
        .updateTable('campaign_contacts')
        .set({
          status: to.status,
          next_attempt_at: to.nextAttemptAt,
          claimed_by: null,
          claimed_until: null,
          session_id: null,
          updated_at: now,
        })
        .where('campaign_id', '=', attempt.campaign_id)
        .where('idx', '=', Number(attempt.idx))
        .where('session_id', '=', sessionId)
        .execute();
      await trx
        .updateTable('campaigns')
        .set((eb) => ({ spent_cents: eb('spent_cents', '+', chargedCents), changed_at: now }))
        .where('id', '=', attempt.campaign_id)
        .execute();
      return { ...attempt, idx: Number(attempt.idx), attempt: Number(attempt.attempt), at: Number(attempt.at) };
    });
  }

  /** Claims whose lease ended before their call was recorded (the instance stopped in between): back to pending, the attempt not counted. */
  async returnExpiredClaims(now: number): Promise<number> {
    const result = await this.db
      .updateTable('campaign_contacts')
      .set((eb) => ({
        status: 'pending',
        claimed_by: null,
        claimed_until: null,
        next_attempt_at: now,
        attempt_count: eb('attempt_count', '-', 1),
        updated_at: now,
      }))
      .where('status', '=', 'calling')
      .where('session_id', 'is', null)
      .where('claimed_until', '<', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Contacts calling for longer than `olderThan` allows (their call may have ended without the campaign hearing of it). */
  async longCalling(before: number, limit: number): Promise<Array<{ session_id: string }>> {
    const rows = await this.db
      .selectFrom('campaign_contacts')
      .select('session_id')
      .where('status', '=', 'calling')
      .where('session_id', 'is not', null)
      .where('updated_at', '<', before)
      .limit(limit)
      .execute();
    return rows.map((r) => ({ session_id: r.session_id! }));
  }

  /** Whether any contact is still to be called or under way. */
  async hasOpenContacts(campaignId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('campaign_contacts')
      .select('idx')
      .where('campaign_id', '=', campaignId)
      .where('status', 'in', ['pending', 'calling'])
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The earliest next attempt of a pending contact (null: none pending). */
  async nextDue(campaignId: string): Promise<number | null> {
    const row = await this.db
      .selectFrom('campaign_contacts')
      .select((eb) => eb.fn.min('next_attempt_at').as('at'))
      .where('campaign_id', '=', campaignId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return num(row?.at ?? null);
  }

  /** Takes the right to send the next campaign_status progress event (at most one per `everyMs` across instances). */
  async takeStatusEvent(campaignId: string, now: number, everyMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable('campaigns')
      .set({ status_event_at: now })
      .where('id', '=', campaignId)
      .where('status_event_at', '<=', now - everyMs)
      .whereRef('changed_at', '>', 'status_event_at')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async markStatusEvent(campaignId: string, now: number, db: Kysely<Database> = this.db): Promise<void> {
    await db.updateTable('campaigns').set({ status_event_at: now }).where('id', '=', campaignId).execute();
  }
}
