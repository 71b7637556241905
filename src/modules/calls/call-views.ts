// GET /api/calls and GET /api/calls/{id} (DESIGN.md "Voice agent: the exact
// contract", "Calls from a browser"): what the account sees of its calls. An
// ended call's transcript, tool calls and recording come from its encrypted
// record in the `calls` store, opened with the store's key.
import { notFound } from '../../http/errors.js';
import { iso } from '../../lib/time.js';
import type { StoreRecords } from '../data/store-records.js';
import type { CallSessionsTable } from './tables.js';
import { transferLegRef } from './transfers.js';
import type { CallChargeStore } from './charge-store.js';
import type { CallStore } from './store.js';

export interface CallListItem {
  id: string;
  direction: string;
  status: string;
  outcome?: string;
  reason?: string;
  from?: string;
  to?: string;
  startedAt: string;
  answeredAt?: string;
  endedAt?: string;
  durationSeconds?: number;
  /** What the call was charged once settled (allowance seconds cost nothing), with its transfer leg once that is settled; absent while it runs and for calls never charged. */
  costUsd?: number;
  /** The campaign the call is an attempt of. */
  campaignId?: string;
}

export interface CallView extends CallListItem {
  transcript?: unknown[];
  toolCalls?: unknown[];
  pathway?: unknown;
  variables?: Record<string, unknown>;
  warnings?: string[];
  recordingUrl?: string;
  /** The post-call analysis, once written (modules/analysis). */
  analysis?: unknown;
}

const ENDED = new Set(['completed', 'failed', 'busy', 'no_answer', 'canceled']);

function listItem(row: CallSessionsTable, chargedCents: Map<string, number>): CallListItem {
  const summary = JSON.parse(row.summary) as { to?: string; from?: string | null };
  const item: CallListItem = {
    id: row.id,
    direction: row.direction ?? 'outbound',
    status: row.status === 'created' ? 'queued' : row.status,
    startedAt: iso(Number(row.created_at)),
  };
  if (row.outcome) item.outcome = row.outcome;
  if (row.campaign_id) item.campaignId = row.campaign_id;
  if (row.reason) item.reason = row.reason;
  if (summary.from) item.from = summary.from;
  if (summary.to) item.to = summary.to;
  if (row.answered_at) item.answeredAt = iso(Number(row.answered_at));
  if (ENDED.has(row.status)) {
    item.endedAt = iso(Number(row.updated_at));
    item.durationSeconds = row.duration_seconds ?? 0;
  }
  const cents = chargedCents.get(row.id);
  if (cents !== undefined) item.costUsd = cents / 100;
  return item;
}

export class CallViews {
  constructor(
    private readonly sessions: Pick<CallStore, 'findSession' | 'listForUser'>,
    private readonly charges: Pick<CallChargeStore, 'chargedCents'>,
    private readonly records: StoreRecords,
    /** The ids of the record's children, in creation order: the recording's parts. */
    private readonly listChildren: (userId: string, objectId: string, limit?: number) => Promise<string[]>,
  ) {}

  /** What each call was charged, its transfer leg's charge added (transfers.ts: a leg settles when the carrier reports its end). */
  async chargedCents(ids: string[]): Promise<Map<string, number>> {
    const charged = await this.charges.chargedCents([...ids, ...ids.map(transferLegRef)]);
    const total = new Map<string, number>();
    for (const id of ids) {
      const own = charged.get(id);
      if (own !== undefined) total.set(id, own + (charged.get(transferLegRef(id)) ?? 0));
    }
    return total;
  }

  /** Newest first; `before` is the last id of the previous page. */
  async list(
    userId: string,
    page: { before?: string; limit: number },
  ): Promise<{ calls: CallListItem[]; nextBefore: string | null }> {
    const rows = await this.sessions.listForUser(userId, page.before ?? null, page.limit + 1);
    const shown = rows.slice(0, page.limit);
    const charged = await this.chargedCents(shown.map((row) => row.id));
    const calls = shown.map((row) => listItem(row, charged));
    return { calls, nextBefore: rows.length > page.limit ? calls.at(-1)!.id : null };
  }

  async get(userId: string, id: string): Promise<CallView> {
    const row = await this.sessions.findSession(id);
    if (!row || row.user_id !== userId) throw notFound('call');
    const view: CallView = listItem(row, await this.chargedCents([id]));
    if (row.record_object_id) {
      const record = JSON.parse((await this.records.read(userId, 'calls', row.record_object_id)).toString('utf8')) as {
        transcript?: unknown[];
        toolCalls?: unknown[];
        pathway?: unknown;
        variables?: Record<string, unknown>;
        warnings?: string[];
        analysis?: unknown;
      };
      // Records of external audio servers (and the timer sandbox) name the other party `contact`.
      view.transcript = (record.transcript ?? []).map((line) => {
        const l = line as { role?: string };
        return l.role === 'contact' ? { ...l, role: 'caller' } : line;
      });
      if (record.toolCalls) view.toolCalls = record.toolCalls;
      if (record.pathway) view.pathway = record.pathway;
      if (record.variables) view.variables = record.variables;
      if (record.warnings?.length) view.warnings = record.warnings;
      if (record.analysis) view.analysis = record.analysis;
      if ((await this.listChildren(userId, row.record_object_id, 1)).length)
        view.recordingUrl = `/api/calls/${id}/recording`;
    }
    return view;
  }

  /** The two-channel WAV of an ended call, its parts joined (404 when it has none). */
  async recording(userId: string, id: string): Promise<Buffer> {
    const row = await this.sessions.findSession(id);
    if (!row || row.user_id !== userId || !row.record_object_id) throw notFound('recording');
    const parts = await this.listChildren(userId, row.record_object_id);
    if (parts.length === 0) throw notFound('recording');
    const bytes: Buffer[] = [];
    for (const part of parts) bytes.push(await this.records.readChild(userId, part));
    return Buffer.concat(bytes);
  }
}
