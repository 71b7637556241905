// Call sessions (spec 4.14, DESIGN "Calls"): a session is recorded, the
// assembled call is handed to the audio server, and each progress report the
// audio server signs moves the session forward once, with a `call_status`
// event and a webhook delivery written in the same transaction. When the call
// ends, usage is recorded and an encrypted call record is written to the
// caller's `calls` store, once.
import { randomUUID } from 'node:crypto';
import { Batcher, type Outcome } from '../../db/batcher.js';
import type { Dialect } from '../../db/database.js';
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { Slots } from '../../lib/slots.js';
import { verifyWebhook, WebhookSignatureError } from '../../lib/standard-webhooks.js';
import { iso } from '../../lib/time.js';
import type {
  AssembledCall,
  AudioProgress,
  AudioProvider,
  CallOutcome,
  CallRecordExtras,
  CallStatus,
  TranscriptLine,
} from '../../providers/audio/interface.js';
import { CALL_STATUSES, FINAL_STATUSES } from '../../providers/audio/interface.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { WebhookService } from '../webhooks/service.js';
import { type CallCharges, type CallDirection, refusalError } from './charges.js';
import type { CallStore } from './store.js';
import type { CallSessionsTable } from './tables.js';

/** Order of statuses: a report moves a session only forward. `created` is ours, before the audio server's first report. */
const RANK: Record<string, number> = { created: 0, queued: 1, ringing: 2, in_progress: 3 };
const rank = (status: string) => RANK[status] ?? 4;
const ALL_STATUSES = ['created', ...CALL_STATUSES];
/** A call with no report for this long has lost its audio server (calls last minutes; one hour is the longest a temporary call type may set). */
export const STALLED_AFTER_MS = 2 * 3600_000;

/** The `call_status` event payload (spec 6, DESIGN "Calls"); the webhook's `data` is the same. */
export interface CallStatusPayload {
  session_id: string;
  /** outbound, inbound or web (DESIGN "Voice agent: the exact contract"). */
  direction: string;
  status: CallStatus;
  at: string;
  duration_seconds?: number;
  transcript?: TranscriptLine[];
  outcome?: CallOutcome;
  reason?: string;
  /** The campaign the call is an attempt of (DESIGN "Campaigns"). */
  campaign_id?: string;
}

/** The account's do-not-call list, asked before every outbound call (src/modules/campaigns/do-not-call-service.ts). */
export interface DoNotCallCheck {
  isListed(userId: string, phone: string): Promise<boolean>;
}

export interface CallServiceDeps {
  store: CallStore;
  dialect: Dialect;
  events: EventRecorder;
  webhooks: WebhookService;
  audio: AudioProvider;
  data: { records: StoreRecords };
  /** What calls cost (charges.ts); null: calls are not charged (tests of other parts). */
  charges: CallCharges | null;
  clock: Clock;
  /** The secret audio reports are verified with. */
  audioSecret: string;
  /** Origin the audio server reports to. */
  publicUrl: string;
  /** Absent: no list is kept (tests of other parts). */
  doNotCall?: DoNotCallCheck;
}

/** How many web calls one user may have live at once; a set-up call counts while it could still connect (created after `connectableSince`). */
export interface WebCallLimit {
  max: number;
  connectableSince: number;
}

export interface CallSessionView {
  id: string;
  status: string;
  durationSeconds: number | null;
  createdAt: string;
  updatedAt: string;
}

/** Told once a call has ended and been accounted for (`chargedCents`: what it cost, null when never charged). Must not throw: it keeps its own backstop for failures. */
export type CallFinishedListener = (
  session: { id: string; userId: string },
  final: CallStatusPayload,
  accounted: { chargedCents: number | null },
) => Promise<void>;

/** Calls accounted for at the same time (usage, record, mark) per instance. */
const FINISH_CONCURRENCY = 4;

interface PendingReport {
  sessionId: string;
  messageId: string;
  report: AudioProgress;
}

/** The `call_status` payload of a report (event and webhook alike). */
function statusPayload(
  { sessionId, report }: { sessionId: string; report: AudioProgress },
  session: Pick<CallSessionsTable, 'direction' | 'campaign_id'>,
): CallStatusPayload {
  const payload: CallStatusPayload = {
    session_id: sessionId,
    direction: session.direction ?? 'outbound',
    status: report.status,
    at: report.at,
  };
  if (session.campaign_id) payload.campaign_id = session.campaign_id;
  if (report.duration_seconds !== undefined) payload.duration_seconds = report.duration_seconds;
  if (report.transcript !== undefined) payload.transcript = report.transcript;
  if (report.outcome !== undefined) payload.outcome = report.outcome;
  if (report.reason !== undefined) payload.reason = report.reason;
  return payload;
}

export class CallService {
  private readonly finishedListeners: CallFinishedListener[] = [];
  /** Record extras of in-process final reports, until the record is written (a crash before then writes the record without them). */
  private readonly recordExtras = new Map<string, CallRecordExtras>();
  private readonly finishSlots = new Slots(FINISH_CONCURRENCY);
  /**
   * PostgreSQL: reports arriving in the same event-loop turn are applied
   * together (one read of their sessions, one transaction of four
   * statements), as object writes are; a burst of 100 reports otherwise costs
   * about 700 round trips. SQLite already shares one commit (GroupCommit).
   */
  private readonly reportBatch: Batcher<PendingReport, void> | null;

  constructor(private readonly deps: CallServiceDeps) {
    this.reportBatch = deps.dialect === 'postgres' ? new Batcher((items) => this.applyBatch(items)) : null;
  }

  /** Registers a listener for ended calls (temporary sessions send their summary email this way). */
  onFinished(listener: CallFinishedListener): void {
    this.finishedListeners.push(listener);
  }

  /** The last report of an ended call (status, duration, transcript); null while it runs. */
  async outcome(sessionId: string): Promise<CallStatusPayload | null> {
    const session = await this.deps.store.findSession(sessionId);
    if (!session || !FINAL_STATUSES.includes(session.status as CallStatus)) return null;
    const last = await this.deps.store.lastProgress(sessionId, session.status);
    return last
      ? (JSON.parse(last.payload) as CallStatusPayload)
      : {
          session_id: sessionId,
          direction: session.direction ?? 'outbound',
          status: session.status as CallStatus,
          at: iso(Number(session.updated_at)),
        };
  }

  /**
   * Records a session for `userId` and hands the assembled call to the audio
   * server. Progress then arrives through handleAudioReport(). The call is
   * authorized first (charges.ts: 402 `insufficient_funds`, 429
   * `concurrency_limit`, 400 `unsupported_destination`) and told its longest
   * duration, unless it is `free` (temporary test calls: the operator's cost).
   * A refused start ends the session as `failed` (with its event and webhook;
   * its hold is returned) and throws `provider_error`.
   */
  async start(
    userId: string,
    call: AssembledCall,
    webhookUrl: string | null,
    options: {
      /** Runs after the session is recorded, before the audio server has the call. */
      onCreated?: (sessionId: string) => Promise<void>;
      /** Not charged and not counted in usage: the operator's own test calls. */
      free?: boolean;
      direction?: CallDirection;
      /** The campaign the call is an attempt of: on its events, record and views. */
      campaignId?: string;
    } = {},
  ): Promise<{ sessionId: string }> {
    const { store, webhooks, clock, charges } = this.deps;
    const url = webhookUrl ? webhooks.checkUrl(webhookUrl) : null;
    const direction = options.direction ?? 'outbound';
    // Every outbound call of the account honours its do-not-call list (single calls, campaigns, test calls).
    if (direction === 'outbound' && (await this.deps.doNotCall?.isListed(userId, call.to)))
      throw new AppError('do_not_call', `${call.to} is on your do-not-call list (DELETE /api/do-not-call/{phone})`);
    // Deliveries are signed with the user's secret: make sure it exists before the first one.
    if (url) await webhooks.ensureSecret(userId);
    const now = clock.now();
    const id = newId(now);
    if (charges && !options.free) {
      // Inbound calls are priced by the country of the number called (the user's), outbound by the number dialled.
      const number = direction === 'outbound' ? call.to : (call.from ?? call.to);
      const authorized = await charges.authorizeCall(userId, {
        ref: id,
        direction,
        number,
        maxDurationSeconds: call.maxDurationSeconds,
      });
      if (!authorized.ok) throw refusalError(authorized);
      call = { ...call, maxDurationSeconds: authorized.maxDurationSeconds };
    }
    const summary = {
      to: call.to,
      from: call.from,
      agent: call.agent,
      contact: call.contact,
      voice: call.voice,
      ...(options.campaignId ? { campaign_id: options.campaignId } : {}),
    };
    await this.insertCharged(id, {
      id,
      user_id: userId,
      direction,
      ...(options.campaignId ? { campaign_id: options.campaignId } : {}),
      status: 'created',
      webhook_url: url,
      summary: JSON.stringify(summary),
      provider_call_id: null,
      duration_seconds: null,
      finished_at: null,
      record_object_id: null,
      created_at: now,
      updated_at: now,
    });
    try {
      await options.onCreated?.(id);
      const { providerCallId } = await this.deps.audio.startCall(
        id,
        call,
        `${this.deps.publicUrl}/api/webhooks/audio/${id}`,
      );
      await store.setProviderCallId(id, providerCallId);
    } catch (err) {
      await this.applyReport(id, `start_${randomUUID()}`, { status: 'failed', at: iso(clock.now()) });
      if (err instanceof AppError) throw err;
      throw new AppError('provider_error', `the audio server did not take the call: ${(err as Error).message}`);
    }
    return { sessionId: id };
  }

  /**
   * A call that reached one of the user's numbers (the voice agent answers
   * it): the session is recorded as `ringing` with the carrier's call id, and
   * charged like an outbound call at the number's country's inbound rate. A
   * refusal (no money, too many calls) is returned, not thrown: the caller is
   * told so in speech, and the session is ended `failed` by the caller of this.
   */
  async openInbound(
    userId: string,
    call: AssembledCall,
    providerCallId: string,
    options: { /** Refused already (e.g. no configuration): recorded, not charged. */ refused?: boolean } = {},
  ): Promise<{ sessionId: string; call: AssembledCall; refusal: { reason: string; message: string } | null }> {
    const { charges, clock } = this.deps;
    const now = clock.now();
    const id = newId(now);
    let refusal: { reason: string; message: string } | null = null;
    if (charges && !options.refused) {
      const authorized = await charges.authorizeCall(userId, {
        ref: id,
        direction: 'inbound',
        number: call.to,
        maxDurationSeconds: call.maxDurationSeconds,
      });
      if (authorized.ok) call = { ...call, maxDurationSeconds: authorized.maxDurationSeconds };
      else refusal = { reason: authorized.reason, message: authorized.message };
    }
    const summary = { to: call.to, from: call.from, agent: call.agent, contact: call.contact, voice: call.voice };
    const row: CallSessionsTable = {
      id,
      user_id: userId,
      direction: 'inbound',
      status: 'created',
      webhook_url: null,
      summary: JSON.stringify(summary),
      provider_call_id: providerCallId,
      duration_seconds: null,
      finished_at: null,
      record_object_id: null,
      created_at: now,
      updated_at: now,
    };
    if (refusal || options.refused) await this.deps.store.insertSession(row);
    else await this.insertCharged(id, row);
    return { sessionId: id, call, refusal };
  }

  /**
   * A call from a browser (DESIGN "Calls from a browser"): recorded with
   * direction `web` and never charged (no hold, no ledger entry, no usage:
   * settleCall finds no charge for it). The browser connects to its media
   * socket next; progress then comes from the voice agent like any call's.
   * With a `limit`, 429 `too_many_calls` when `max` of the user's web calls
   * are set up or under way (CallStore.insertWebUnderLimit).
   */
  async openWeb(userId: string, call: AssembledCall, limit?: WebCallLimit): Promise<{ sessionId: string }> {
    const now = this.deps.clock.now();
    const id = newId(now);
    const row: CallSessionsTable = {
      id,
      user_id: userId,
      direction: 'web',
      status: 'created',
      webhook_url: null,
      summary: JSON.stringify({ agent: call.agent, contact: call.contact, voice: call.voice }),
      provider_call_id: null,
      duration_seconds: null,
      finished_at: null,
      record_object_id: null,
      created_at: now,
      updated_at: now,
    };
    if (!limit) await this.deps.store.insertSession(row);
    else if (!(await this.deps.store.insertWebUnderLimit(row, { ...limit, finalStatuses: FINAL_STATUSES })))
      throw new AppError(
        'too_many_calls',
        `at most ${limit.max} web calls may be set up or under way at once: hang one up first`,
        {
          limit: limit.max,
        },
      );
    return { sessionId: id };
  }

  /** Forgets a web call refused right after it was recorded (over a limit): it never started. */
  async discardWeb(sessionId: string): Promise<void> {
    await this.deps.store.deleteUnstartedSession(sessionId);
  }

  /** Inserts a session whose call was authorized; when that fails, its charge is closed again (hold returned). */
  private async insertCharged(id: string, row: CallSessionsTable): Promise<void> {
    try {
      await this.deps.store.insertSession(row);
    } catch (err) {
      await this.deps.charges?.settleCall(id, { seconds: 0 });
      throw err;
    }
  }

  /** A session of the user (404 for another user's or a missing one). */
  async get(userId: string, sessionId: string): Promise<CallSessionView> {
    const row = await this.deps.store.findSession(sessionId);
    if (!row || row.user_id !== userId) throw notFound('call session');
    return {
      id: row.id,
      status: row.status,
      durationSeconds: row.duration_seconds,
      createdAt: iso(Number(row.created_at)),
      updatedAt: iso(Number(row.updated_at)),
    };
  }

  /**
   * POST /api/webhooks/audio/{sessionId}: verifies the Standard Webhooks
   * signature over the raw body first (400 `invalid_token`, nothing changed),
   * then applies the report once per webhook-id.
   */
  async handleAudioReport(
    sessionId: string,
    rawBody: Buffer,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<void> {
    let messageId: string;
    try {
      messageId = verifyWebhook(this.deps.audioSecret, headers, rawBody, this.deps.clock.now());
    } catch (err) {
      if (err instanceof WebhookSignatureError)
        throw new AppError('invalid_token', `audio report refused: ${err.message}`);
      throw err;
    }
    await this.applyReport(sessionId, messageId, parseReport(rawBody));
  }

  /**
   * A report of the in-process voice agent (no signature: it never left the
   * process), applied like any other; `extras` go into the call record.
   */
  async report(sessionId: string, reportId: string, progress: AudioProgress, extras?: CallRecordExtras): Promise<void> {
    if (extras) this.recordExtras.set(sessionId, extras);
    try {
      await this.applyReport(sessionId, reportId, progress);
    } finally {
      this.recordExtras.delete(sessionId);
    }
  }

  /**
   * Keeps the report, and when it moves the session forward: status,
   * `call_status` event and webhook delivery in one transaction; then, for a
   * final status, usage and the call record.
   */
  private async applyReport(sessionId: string, messageId: string, report: AudioProgress): Promise<void> {
    if (this.reportBatch) return this.reportBatch.run({ sessionId, messageId, report });
    const { store, events, webhooks, clock } = this.deps;
    const now = clock.now();
    const session = await store.findSession(sessionId);
    if (!session) throw notFound('call session');
    const payload = statusPayload({ sessionId, report }, session);
    const earlier = ALL_STATUSES.filter((s) => rank(s) < rank(report.status));

    const advanced = await store.transaction(async (tx) => {
      if (
        !(await tx.insertProgress({
          id: messageId,
          session_id: sessionId,
          status: report.status,
          payload: JSON.stringify(payload),
          received_at: now,
        }))
      )
        return false;
      if (!(await tx.advanceStatus(sessionId, earlier, report.status, report.duration_seconds ?? null, now)))
        return false;
      if (session.webhook_url)
        await webhooks.enqueue(tx.db, [
          { userId: session.user_id, url: session.webhook_url, type: 'call_status', data: { ...payload } },
        ]);
      await events.record(tx.db, [{ userId: session.user_id, type: 'call_status', payload: { ...payload } }]);
      return true;
    });
    if (!advanced) return;
    events.announce();
    if (session.webhook_url) webhooks.wake();
    if (FINAL_STATUSES.includes(report.status))
      await this.finish(
        { ...session, status: report.status, duration_seconds: report.duration_seconds ?? null },
        payload,
      );
  }

  /** applyReport for many reports: one round per report of a session, so a session's reports keep their order. */
  private async applyBatch(items: PendingReport[]): Promise<Array<Outcome<void>>> {
    const outcomes: Array<Outcome<void>> = new Array(items.length);
    let pending = items.map((item, index) => ({ item, index }));
    while (pending.length > 0) {
      const seen = new Set<string>();
      const round: typeof pending = [];
      const later: typeof pending = [];
      for (const p of pending) {
        if (seen.has(p.item.sessionId)) later.push(p);
        else {
          seen.add(p.item.sessionId);
          round.push(p);
        }
      }
      try {
        await this.applyRound(round, outcomes);
      } catch (error) {
        for (const p of round) outcomes[p.index] ??= { ok: false, error };
      }
      pending = later;
    }
    return outcomes;
  }

  private async applyRound(
    round: Array<{ item: PendingReport; index: number }>,
    outcomes: Array<Outcome<void>>,
  ): Promise<void> {
    const { store, events, webhooks, clock } = this.deps;
    const now = clock.now();
    const sessions = new Map((await store.findSessions(round.map((p) => p.item.sessionId))).map((s) => [s.id, s]));
    const live = round.filter((p) => {
      if (sessions.has(p.item.sessionId)) return true;
      outcomes[p.index] = { ok: false, error: notFound('call session') };
      return false;
    });
    const moved = await store.transaction(async (tx) => {
      const kept = await tx.insertProgressMany(
        live.map(({ item }) => ({
          id: item.messageId,
          session_id: item.sessionId,
          status: item.report.status,
          payload: JSON.stringify(statusPayload(item, sessions.get(item.sessionId)!)),
          received_at: now,
        })),
      );
      const fresh = live.filter((p) => kept.has(p.item.messageId));
      const advanced = await tx.advanceStatusMany(
        fresh.map(({ item }) => ({
          id: item.sessionId,
          from: ALL_STATUSES.filter((s) => rank(s) < rank(item.report.status)),
          status: item.report.status,
          durationSeconds: item.report.duration_seconds ?? null,
          now,
        })),
      );
      const moving = fresh.filter((p) => advanced.has(p.item.sessionId));
      const hooks = moving.filter((p) => sessions.get(p.item.sessionId)!.webhook_url);
      if (hooks.length)
        await webhooks.enqueue(
          tx.db,
          hooks.map(({ item }) => ({
            userId: sessions.get(item.sessionId)!.user_id,
            url: sessions.get(item.sessionId)!.webhook_url!,
            type: 'call_status',
            data: { ...statusPayload(item, sessions.get(item.sessionId)!) },
          })),
        );
      await events.record(
        tx.db,
        moving.map(({ item }) => ({
          userId: sessions.get(item.sessionId)!.user_id,
          type: 'call_status' as const,
          payload: { ...statusPayload(item, sessions.get(item.sessionId)!) },
        })),
      );
      return moving;
    });
    for (const p of live) outcomes[p.index] = { ok: true, value: undefined };
    if (moved.length === 0) return;
    events.announce();
    if (moved.some((p) => sessions.get(p.item.sessionId)!.webhook_url)) webhooks.wake();
    await Promise.all(
      moved
        .filter((p) => FINAL_STATUSES.includes(p.item.report.status))
        .map(({ item }) => {
          const session = sessions.get(item.sessionId)!;
          return this.finish(
            { ...session, status: item.report.status, duration_seconds: item.report.duration_seconds ?? null },
            statusPayload(item, session),
          );
        }),
    );
  }

  /**
   * The end of a call, accounted for once: its charge settled (usage: one
   * call and its seconds in its direction; the hold kept for what it cost and
   * the rest returned; all idempotent by reference), then the encrypted call
   * record in the caller's `calls` store, then the mark.
   */
  private async finish(session: CallSessionsTable, final: CallStatusPayload): Promise<void> {
    // Accounting is not urgent: a few at a time, so a burst of ended calls does not crowd out the
    // delivery of live events (their reads wait behind every statement sent before them).
    const release = await this.finishSlots.acquire();
    try {
      await this.finishNow(session, final);
    } finally {
      release();
    }
  }

  private async finishNow(session: CallSessionsTable, final: CallStatusPayload): Promise<void> {
    const { charges, clock } = this.deps;
    if (session.finished_at !== null) return;
    // Usage and money, once per call (settleCall is idempotent): a failed, abandoned or stalled call settles too.
    const settled = charges ? await charges.settleCall(session.id, { seconds: session.duration_seconds ?? 0 }) : null;
    const recordId = await this.writeCallRecord(session, final);
    await this.deps.store.markFinished(session.id, recordId, clock.now());
    const accounted = { chargedCents: settled?.chargedCents ?? null };
    for (const listener of this.finishedListeners)
      await listener({ id: session.id, userId: session.user_id }, final, accounted);
  }

  /**
   * Finishes calls that ended while the process that received their last
   * report stopped before accounting for them (run at start and periodically).
   */
  async finishAbandoned(olderThanMs = 5 * 60_000): Promise<number> {
    const { store, clock } = this.deps;
    let done = 0;
    for (const session of await store.listEndedUnfinished(FINAL_STATUSES, 100)) {
      if (Number(session.updated_at) > clock.now() - olderThanMs) continue;
      const last = await store.lastProgress(session.id, session.status);
      const final: CallStatusPayload = last
        ? (JSON.parse(last.payload) as CallStatusPayload)
        : {
            session_id: session.id,
            direction: session.direction ?? 'outbound',
            status: session.status as CallStatus,
            at: iso(Number(session.updated_at)),
          };
      await this.finish(session, final);
      done++;
    }
    return done;
  }

  /**
   * Ends as `failed` the calls that have not changed for `quietMs`: their
   * audio server stopped reporting (the in-process sandbox's process
   * stopped mid-call, or a real server lost the call). The end goes through
   * the usual path once (event, webhook, record); the report id is fixed per
   * session, so two instances doing this at once end it once.
   */
  async failStalled(quietMs = STALLED_AFTER_MS): Promise<number> {
    const now = this.deps.clock.now();
    let ended = 0;
    for (const session of await this.deps.store.listStalled(FINAL_STATUSES, now - quietMs, 100)) {
      await this.applyReport(session.id, `stalled_${session.id}`, { status: 'failed', at: iso(now) });
      ended++;
    }
    return ended;
  }

  /** The record, sealed with the `calls` store's default key by the data area (as the SDK encrypts); a recording is its child. */
  private async writeCallRecord(session: CallSessionsTable, final: CallStatusPayload): Promise<string> {
    const { records } = this.deps.data;
    const summary = JSON.parse(session.summary) as Record<string, unknown>;
    const extras = this.recordExtras.get(session.id);
    const record = {
      session_id: session.id,
      status: final.status,
      ...(final.outcome ? { outcome: final.outcome } : {}),
      ...(final.reason ? { reason: final.reason } : {}),
      ...summary,
      created_at: iso(Number(session.created_at)),
      ended_at: final.at,
      duration_seconds: final.duration_seconds ?? session.duration_seconds ?? 0,
      transcript: final.transcript ?? [],
      ...extras?.fields,
    };
    const created = await records.create(session.user_id, 'calls', Buffer.from(JSON.stringify(record), 'utf8'));
    // In order: children list by creation, and the parts are the file's bytes in sequence.
    for (const part of extras?.recordingParts ?? []) await records.create(session.user_id, 'calls', part, created.id);
    return created.id;
  }
}

/** The report body: `{ status, at, duration_seconds?, transcript? }`; anything else is 400. */
function parseReport(rawBody: Buffer): AudioProgress {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw invalidInput('audio report is not JSON');
  }
  const b = body as Record<string, unknown>;
  if (!b || typeof b !== 'object') throw invalidInput('audio report must be an object');
  if (typeof b.status !== 'string' || !(CALL_STATUSES as readonly string[]).includes(b.status))
    throw invalidInput(`status must be one of ${CALL_STATUSES.join(', ')}`);
  if (typeof b.at !== 'string' || Number.isNaN(Date.parse(b.at))) throw invalidInput('at must be an ISO-8601 time');
  const report: AudioProgress = { status: b.status as CallStatus, at: new Date(b.at).toISOString() };
  if (b.duration_seconds !== undefined) {
    if (
      !Number.isInteger(b.duration_seconds) ||
      (b.duration_seconds as number) < 0 ||
      (b.duration_seconds as number) > 86_400
    )
      throw invalidInput('duration_seconds must be a whole number of seconds');
    report.duration_seconds = b.duration_seconds as number;
  }
  if (b.transcript !== undefined) {
    const lines = b.transcript;
    const valid =
      Array.isArray(lines) &&
      lines.length <= 1000 &&
      lines.every(
        (l) =>
          l &&
          typeof l === 'object' &&
          ['agent', 'contact'].includes((l as TranscriptLine).role) &&
          typeof (l as TranscriptLine).text === 'string' &&
          (l as TranscriptLine).text.length <= 10_000,
      );
    if (!valid) throw invalidInput('transcript must be a list of { role: agent | contact, text }');
    report.transcript = (lines as TranscriptLine[]).map((l) => ({ role: l.role, text: l.text }));
  }
  return report;
}
