// SQL of the built-in voice agent's side of call sessions (migration 240):
// the sealed assembled call, the answer time, which instance carries the
// media stream (and its heartbeat), the outcome; and the account's call list.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { CallSessionsTable } from '../calls/tables.js';

export class VoiceCallStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The sealed assembled call, and when its media stream must have connected by (the media token's expiry). */
  async saveAssembled(sessionId: string, sealed: string, mediaDeadlineAt: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ assembled: sealed, media_deadline_at: mediaDeadlineAt })
      .where('id', '=', sessionId)
      .execute();
  }

  /** Sessions not ended whose stream never connected though its deadline passed before `before` (their token expired unused). */
  listUnconnected(
    finalStatuses: readonly string[],
    before: number,
    limit: number,
  ): Promise<Array<Pick<CallSessionsTable, 'id' | 'direction'>>> {
    return this.db
      .selectFrom('call_sessions')
      .select(['id', 'direction'])
      .where('media_deadline_at', '<', before)
      .where('media_instance', 'is', null)
      .where('status', 'not in', finalStatuses)
      .limit(limit)
      .execute();
  }

  /** What the carrier said a carried call lasted, kept for the case its instance died before reporting the end itself. */
  async setCarrierDuration(sessionId: string, seconds: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ carrier_duration_seconds: seconds })
      .where('id', '=', sessionId)
      .execute();
  }

  find(sessionId: string): Promise<CallSessionsTable | undefined> {
    return this.db.selectFrom('call_sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  }

  async markAnswered(sessionId: string, at: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ answered_at: at })
      .where('id', '=', sessionId)
      .where('answered_at', 'is', null)
      .execute();
  }

  async setAnsweredBy(sessionId: string, answeredBy: string): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ answered_by: answeredBy })
      .where('id', '=', sessionId)
      .where('answered_by', 'is', null)
      .execute();
  }

  /** Takes the session's media for `instance`; false when another connection has it already (one stream per call). */
  async claimMedia(sessionId: string, instance: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('call_sessions')
      .set({ media_instance: instance, media_heartbeat_at: now })
      .where('id', '=', sessionId)
      .where('media_instance', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** This instance still carries these calls (and still holds, in its sandbox carrier, the calls it placed that have not connected). */
  async heartbeat(
    instance: string,
    sessionIds: readonly string[],
    finalStatuses: readonly string[],
    now: number,
  ): Promise<void> {
    if (sessionIds.length > 0)
      await this.db
        .updateTable('call_sessions')
        .set({ media_heartbeat_at: now })
        .where('media_instance', '=', instance)
        .where('id', 'in', sessionIds)
        .execute();
    await this.db
      .updateTable('call_sessions')
      .set({ media_heartbeat_at: now })
      .where('carrier_instance', '=', instance)
      .where('media_instance', 'is', null)
      .where('status', 'not in', finalStatuses)
      .execute();
  }

  /** The call is held by this instance's in-process sandbox carrier until its stream connects (ringing there dies with it). */
  async setCarrierInstance(sessionId: string, instance: string, now: number): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ carrier_instance: instance, media_heartbeat_at: now })
      .where('id', '=', sessionId)
      .execute();
  }

  /**
   * Calls not ended whose instance (the one carrying their media, or holding
   * them in its sandbox carrier) has been silent since `staleBefore`: that
   * instance stopped. `otherThan`: every instance but this one (a SQLite
   * server at start: no other process can have the data folder).
   */
  listOrphaned(
    finalStatuses: readonly string[],
    staleBefore: number,
    limit: number,
    otherThan?: string,
  ): Promise<
    Array<Pick<CallSessionsTable, 'id' | 'user_id' | 'answered_at' | 'media_heartbeat_at' | 'carrier_duration_seconds'>>
  > {
    let query = this.db
      .selectFrom('call_sessions')
      .select(['id', 'user_id', 'answered_at', 'media_heartbeat_at', 'carrier_duration_seconds'])
      .where((eb) => eb.or([eb('media_instance', 'is not', null), eb('carrier_instance', 'is not', null)]))
      .where('status', 'not in', finalStatuses);
    query = otherThan
      ? query.where((eb) =>
          eb.and([
            eb.or([eb('media_instance', 'is', null), eb('media_instance', '!=', otherThan)]),
            eb.or([eb('carrier_instance', 'is', null), eb('carrier_instance', '!=', otherThan)]),
          ]),
        )
      : query.where('media_heartbeat_at', '<', staleBefore);
    return query.limit(limit).execute();
  }

  /** Sets why the call ended, once (the first final report's reason stands). */
  async setOutcome(sessionId: string, outcome: string, reason: string | null): Promise<void> {
    await this.db
      .updateTable('call_sessions')
      .set({ outcome, reason })
      .where('id', '=', sessionId)
      .where('outcome', 'is', null)
      .execute();
  }

  /** The user's session opened for the carrier's call `callSid` since `since` (the sandbox carrier's inbound calls; the user's index bounds the search). */
  async findByProviderCall(userId: string, callSid: string, since: number): Promise<string | null> {
    const row = await this.db
      .selectFrom('call_sessions')
      .select('id')
      .where('user_id', '=', userId)
      .where('created_at', '>=', since)
      .where('provider_call_id', '=', callSid)
      .executeTakeFirst();
    return row?.id ?? null;
  }

  /**
   * The user's calls from a browser that are set up or under way: not ended,
   * and either connected (a media instance carries them) or still able to
   * connect (created after `connectableSince`, when a token issued then is
   * still valid). A set-up call whose browser never came stops counting when
   * its token expires, whoever ends it.
   */
  async countLiveWeb(userId: string, finalStatuses: readonly string[], connectableSince: number): Promise<number> {
    const row = await this.db
      .selectFrom('call_sessions')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId)
      .where('direction', '=', 'web')
      .where('status', 'not in', finalStatuses)
      .where((eb) => eb.or([eb('media_instance', 'is not', null), eb('created_at', '>', connectableSince)]))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The user's sessions, newest first, after the cursor (an id: ids are time-ordered UUIDv7). */
  listForUser(userId: string, before: string | null, limit: number): Promise<CallSessionsTable[]> {
    let query = this.db.selectFrom('call_sessions').selectAll().where('user_id', '=', userId);
    if (before) query = query.where('id', '<', before);
    return query.orderBy('id', 'desc').limit(limit).execute();
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
