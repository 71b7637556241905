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
import { pacingSlots } from './pacing.js';
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

/** The campaign as a call's end leaves it. */
export type FinishedCampaign = Pick<
  CampaignsTable,
  'id' | 'user_id' | 'webhook_url' | 'status' | 'budget_cents' | 'spent_cents'
>;

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

  /** The running campaigns, with what tells whether a round has anything to do for one (its pacing, its events). */
  async running(): Promise<
    Array<Pick<CampaignsTable, 'id' | 'calls_per_minute' | 'next_dial_at' | 'changed_at' | 'status_event_at'>>
  > {
    const rows = await this.db
      .selectFrom('campaigns')
      .select(['id', 'calls_per_minute', 'next_dial_at', 'changed_at', 'status_event_at'])
      .where('status', '=', 'running')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      calls_per_minute: Number(r.calls_per_minute),
      next_dial_at: Number(r.next_dial_at),
      changed_at: Number(r.changed_at),
      status_event_at: Number(r.status_event_at),
    }));
  }

  /**
   * One round of the dialer for a running campaign: locks its row (skipped
   * when another instance holds it) and counts its calls under way in the
   * same statement, works out the slots free now (pacingSlots, capped by the
   * calls under way against max_concurrent and by `maxBatch`), lets `plan`
   * choose among up to twice that many due contacts, each read with whether
   * it is on the owner's do-not-call list (`plan` must not touch the
   * database: the transaction holds SQLite's one connection), claims the
   * chosen ones for `instanceId` until `leaseUntil` and moves the pacing
   * pointer on by as many slots. It also takes the right to the next
   * campaign_status progress event (`statusEvent`: at most one per
   * `statusEveryMs` across instances, only when something changed since the
   * last). Returns the claimed contacts (their attempt count already
   * raised) and the calls that were under way before them, or null when the
   * campaign was not running or was locked.
   */
  async claim(
    campaignId: string,
    input: {
      instanceId: string;
      now: number;
      leaseUntil: number;
      maxBatch: number;
      burstMs: number;
      statusEveryMs: number;
    },
    plan: (campaign: CampaignsTable, due: CampaignContactsTable[], slots: number, listed: Set<string>) => ClaimPlan,
  ): Promise<{
    campaign: CampaignsTable;
    claimed: CampaignContactsTable[];
    calling: number;
    statusEvent: boolean;
  } | null> {
    const { now } = input;
    const lock = this.dialect === 'postgres' ? sql` for update skip locked` : sql``;
    return this.db.transaction().execute(async (trx) => {
      const { rows } = await sql<CampaignsTable & { calling_now: number }>`
        select c.*, (select count(*) from campaign_contacts cc
                      where cc.campaign_id = c.id and cc.status = 'calling') as calling_now
          from campaigns c where c.id = ${campaignId} and c.status = 'running'${lock}`.execute(trx);
      if (!rows[0]) return null;
      const { calling_now, ...row } = rows[0];
      const campaign = campaignRow(row);
      const calling = Number(calling_now);
      const pacing = pacingSlots(campaign.next_dial_at, now, campaign.calls_per_minute, input.burstMs);
      const slots = Math.min(pacing.due, campaign.max_concurrent - calling, input.maxBatch);
      let due: Array<CampaignContactsTable & { listed: boolean }> = [];
      if (slots > 0)
        due = (
          await trx
            .selectFrom('campaign_contacts')
            .selectAll('campaign_contacts')
            // The do-not-call list read in the same statement (SQLite has one connection: a read beside it would wait for it).
            .select((eb) =>
              eb
                .exists(
                  eb
                    .selectFrom('do_not_call')
                    .select('do_not_call.phone')
                    .where('do_not_call.user_id', '=', campaign.user_id)
                    .whereRef('do_not_call.phone', '=', 'campaign_contacts.phone'),
                )
                .as('listed'),
            )
            .where('campaign_id', '=', campaignId)
            .where('status', '=', 'pending')
            .where('next_attempt_at', '<=', now)
            .orderBy('next_attempt_at')
            .orderBy('idx')
            .limit(slots * 2)
            .execute()
        ).map(({ listed, ...r }) => ({ ...contactRow(r), listed: Number(listed) === 1 }));
      const decided: ClaimPlan = due.length
        ? plan(
            campaign,
            due.map(({ listed: _, ...c }) => c),
            slots,
            new Set(due.filter((c) => c.listed).map((c) => c.phone)),
          )
        : { claim: [], later: [], never: [] };
      // Contacts moved to the same time (one zone's next opening) in one statement.
      const later = new Map<number, number[]>();
      for (const { idx, at } of decided.later) later.set(at, [...(later.get(at) ?? []), idx]);
      for (const [at, idxs] of later)
        await trx
          .updateTable('campaign_contacts')
          .set({ next_attempt_at: at, updated_at: now })
          .where('campaign_id', '=', campaignId)
          .where('idx', 'in', idxs)
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
      const chosen = decided.claim.slice(0, Math.max(0, slots));
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
      const moved = claimed.length > 0 || decided.later.length > 0 || decided.never.length > 0;
      const changedAt = moved ? now : campaign.changed_at;
      const statusEvent = campaign.status_event_at <= now - input.statusEveryMs && changedAt > campaign.status_event_at;
      // A round that dialled nobody leaves the pointer as it is (each read clamps it to the burst: the same slots), so
      // an idle round (contacts outside their hours, the cap reached) writes nothing.
      if (claimed.length > 0 || moved || statusEvent)
        await trx
          .updateTable('campaigns')
          .set({
            next_dial_at: pacing.after(claimed.length),
            ...(moved ? { changed_at: now } : {}),
            ...(statusEvent ? { status_event_at: now } : {}),
          })
          .where('id', '=', campaignId)
          .execute();
      return { campaign, claimed, calling, statusEvent };
    });
  }

  /** The claimed contact's call was recorded: the claim's lease ends (the call now decides), and the attempt is kept. PostgreSQL: one statement. */
  async attach(campaignId: string, idx: number, instanceId: string, sessionId: string, now: number): Promise<boolean> {
    if (this.dialect === 'postgres') {
      const { rows } = await sql<{ n: number }>`
        with c as (
          update campaign_contacts set session_id = ${sessionId}, claimed_until = null, updated_at = ${now}::bigint
           where campaign_id = ${campaignId} and idx = ${idx}::integer and status = 'calling'
             and claimed_by = ${instanceId} and session_id is null
          returning attempt_count),
        a as (
          insert into campaign_attempts (session_id, campaign_id, idx, attempt, outcome, at)
          select ${sessionId}, ${campaignId}, ${idx}::integer, attempt_count, null, ${now}::bigint from c
          returning 1),
        u as (
          update campaigns set attempts = attempts + 1, changed_at = ${now}::bigint
           where id = ${campaignId} and exists (select 1 from c)
          returning 1)
        select (select count(*) from a) + (select count(*) from u) as n`.execute(this.db);
      return Number(rows[0]?.n) === 2;
    }
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
   * What deciding a call's end needs, in one read: its attempt (with its
   * outcome: not null when it was decided already), its campaign's
   * definition and status, its contact, and the owner's do-not-call listing
   * of the contact's number.
   */
  async findFinishing(sessionId: string): Promise<{
    attempt: CampaignAttemptsTable;
    campaign: Pick<CampaignsTable, 'id' | 'user_id' | 'definition' | 'status'>;
    contact: Pick<CampaignContactsTable, 'phone' | 'attempt_count'>;
    listing: { source: string; session_id: string | null } | null;
  } | null> {
    const row = await this.db
      .selectFrom('campaign_attempts as a')
      .innerJoin('campaigns as c', 'c.id', 'a.campaign_id')
      .innerJoin('campaign_contacts as cc', (j) =>
        j.onRef('cc.campaign_id', '=', 'a.campaign_id').onRef('cc.idx', '=', 'a.idx'),
      )
      .leftJoin('do_not_call as d', (j) => j.onRef('d.user_id', '=', 'c.user_id').onRef('d.phone', '=', 'cc.phone'))
      .select([
        'a.session_id',
        'a.campaign_id',
        'a.idx',
        'a.attempt',
        'a.outcome',
        'a.at',
        'c.user_id',
        'c.definition',
        'c.status',
        'cc.phone',
        'cc.attempt_count',
        'd.source as listing_source',
        'd.session_id as listing_session_id',
      ])
      .where('a.session_id', '=', sessionId)
      .executeTakeFirst();
    if (!row) return null;
    return {
      attempt: {
        session_id: row.session_id,
        campaign_id: row.campaign_id,
        idx: Number(row.idx),
        attempt: Number(row.attempt),
        outcome: row.outcome,
        at: Number(row.at),
      },
      campaign: { id: row.campaign_id, user_id: row.user_id, definition: row.definition, status: row.status },
      contact: { phone: row.phone, attempt_count: Number(row.attempt_count) },
      listing: row.listing_source ? { source: row.listing_source, session_id: row.listing_session_id } : null,
    };
  }

  /**
   * The attempt's call ended: its outcome kept, the contact moved to `to`,
   * its cost added to the campaign's spend; once (null when the attempt was
   * finished before: another instance, a retried listener). Returns the
   * campaign after it (its status and spend). PostgreSQL: one statement.
   */
  async finishAttempt(
    sessionId: string,
    outcome: string,
    to: { status: ContactStatus; nextAttemptAt: number },
    chargedCents: number,
    now: number,
  ): Promise<FinishedCampaign | null> {
    const finished = (c: FinishedCampaign): FinishedCampaign => ({
      ...c,
      budget_cents: num(c.budget_cents),
      spent_cents: Number(c.spent_cents),
    });
    if (this.dialect === 'postgres') {
      const { rows } = await sql<FinishedCampaign>`
        with a as (
          update campaign_attempts set outcome = ${outcome}
           where session_id = ${sessionId} and outcome is null
          returning campaign_id, idx),
        cc as (
          update campaign_contacts x
             set status = ${to.status}, next_attempt_at = ${to.nextAttemptAt}::bigint, claimed_by = null,
                 claimed_until = null, session_id = null, updated_at = ${now}::bigint
            from a
           where x.campaign_id = a.campaign_id and x.idx = a.idx and x.session_id = ${sessionId}
          returning 1)
        update campaigns c
           set spent_cents = c.spent_cents + ${chargedCents}::bigint, changed_at = ${now}::bigint
          from a
         where c.id = a.campaign_id
        returning c.id, c.user_id, c.webhook_url, c.status, c.budget_cents, c.spent_cents`.execute(this.db);
      return rows[0] ? finished(rows[0]) : null;
    }
    return this.db.transaction().execute(async (trx) => {
      const attempt = await trx
        .updateTable('campaign_attempts')
        .set({ outcome })
        .where('session_id', '=', sessionId)
        .where('outcome', 'is', null)
        .returning(['campaign_id', 'idx'])
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
      const campaign = await trx
        .updateTable('campaigns')
        .set((eb) => ({ spent_cents: eb('spent_cents', '+', chargedCents), changed_at: now }))
        .where('id', '=', attempt.campaign_id)
        .returning(['id', 'user_id', 'webhook_url', 'status', 'budget_cents', 'spent_cents'])
        .executeTakeFirstOrThrow();
      return finished(campaign);
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
      // As the partial index campaign_contacts_calling spells it (migration 550), so both databases read only it.
      .where('status', '=', sql.lit('calling'))
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
      .where('status', '=', sql.lit('calling'))
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

  async markStatusEvent(campaignId: string, now: number, db: Kysely<Database> = this.db): Promise<void> {
    await db.updateTable('campaigns').set({ status_event_at: now }).where('id', '=', campaignId).execute();
  }
}
