// Campaigns (DESIGN.md "Campaigns"): created from an agent, the caller's
// numbers and up to 10,000 contacts, kept as rows (the dialer's state) and
// written, encrypted, to the owner's `campaigns` store; moved through draft,
// running, paused, completed and cancelled, each move with a
// `campaign_status` event and a delivery to the campaign's webhook in the
// same transaction. The dialer (dialer.ts) places the calls.
import { AppError, invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { iso } from '../../lib/time.js';
import { type AgentRecord, parseAgentRecord } from '../calls/agent-calls.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { WebhookService } from '../webhooks/service.js';
import { validZone } from './business-hours.js';
import {
  type CampaignDefinition,
  type CampaignInput,
  invalidCampaign,
  parseSchedule,
  RETRY_OUTCOMES,
} from './definition.js';
import type { CampaignStore } from './store.js';
import {
  CONTACT_STATUSES,
  type CampaignContactsTable,
  type CampaignStatus,
  type CampaignsTable,
  type ContactStatus,
} from './tables.js';

const E164 = /^\+[1-9]\d{6,14}$/;

export type CampaignCounts = { total: number } & Record<ContactStatus, number>;

export interface CampaignView {
  id: string;
  name: string;
  status: CampaignStatus;
  reason?: string;
  counts: CampaignCounts;
  attempts: number;
  spentUsd: number;
  budgetUsd?: number;
  pacing: { callsPerMinute: number; maxConcurrent: number };
  objectId?: string;
  createdAt: string;
  startedAt?: string;
  endedAt?: string;
}

export interface CampaignContactView {
  index: number;
  contactId?: string;
  name: string;
  phone: string;
  status: ContactStatus;
  attempts: Array<{ sessionId: string; outcome?: string; at: string }>;
  nextAttemptAt?: string;
}

export interface CampaignStatusPayload {
  campaign_id: string;
  status: CampaignStatus;
  reason?: string;
  counts: CampaignCounts;
  at: string;
}

export interface CampaignServiceDeps {
  store: CampaignStore;
  records: Pick<StoreRecords, 'create' | 'read'>;
  numbers: Pick<PhoneNumberService, 'get'>;
  events: EventRecorder;
  webhooks: Pick<WebhookService, 'checkUrl' | 'ensureSecret' | 'enqueue' | 'wake'>;
  secretBox: SecretBox;
  clock: Clock;
  /** Whether one minute to `phone` can be paid now (start and resume: 402 otherwise). */
  affordable(userId: string, phone: string): Promise<{ ok: true } | { ok: false; message: string }>;
  /** Checks that a contact's call of the campaign can be assembled (pathway, persona, knowledge base, tools): throws what a call would. */
  checkCall(userId: string, definition: CampaignDefinition, contact: CampaignContactsTable): Promise<void>;
  /** The account's call concurrency: the default of maxConcurrent. */
  defaultMaxConcurrent: number;
}

type Move = 'start' | 'pause' | 'resume' | 'cancel';
const MOVES: Record<Move, { from: CampaignStatus[]; to: CampaignStatus }> = {
  start: { from: ['draft'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  resume: { from: ['paused'], to: 'running' },
  cancel: { from: ['draft', 'running', 'paused'], to: 'cancelled' },
};

function emptyCounts(): CampaignCounts {
  return Object.fromEntries([['total', 0], ...CONTACT_STATUSES.map((s) => [s, 0])]) as CampaignCounts;
}

export class CampaignService {
  /** Definitions opened once per campaign on this instance (they never change after creation). */
  private readonly definitions = new Map<string, CampaignDefinition>();

  constructor(private readonly deps: CampaignServiceDeps) {}

  definition(campaign: Pick<CampaignsTable, 'id' | 'definition'>): CampaignDefinition {
    let def = this.definitions.get(campaign.id);
    if (!def) {
      def = JSON.parse(this.deps.secretBox.openText(campaign.definition)) as CampaignDefinition;
      if (this.definitions.size > 1000) this.definitions.clear();
      this.definitions.set(campaign.id, def);
    }
    return def;
  }

  async create(userId: string, input: CampaignInput): Promise<{ id: string; status: 'draft'; objectId: string }> {
    const { store, records, numbers, clock, secretBox } = this.deps;
    const agent = await this.agentOf(userId, input);
    if (input.pathway !== undefined && input.pathwayId !== undefined)
      throw invalidInput('name the pathway by pathway or by pathwayId, not both');
    const pathway = input.pathwayId !== undefined ? { id: input.pathwayId } : input.pathway;
    const from: string[] = [];
    for (const id of [...new Set(input.fromNumberIds)]) {
      const n = await numbers.get(userId, id);
      if (!n.capabilities.voice || n.status !== 'active')
        throw new AppError('conflict', `phone number ${id} cannot place voice calls`);
      from.push(n.phoneNumber);
    }
    const schedule = parseSchedule(input.schedule);
    const retry = {
      maxAttempts: input.retry?.maxAttempts ?? 2,
      delayMinutes: input.retry?.delayMinutes ?? 60,
      on: [...new Set(input.retry?.on ?? (['no_answer', 'busy', 'failed'] as const))].filter((o) =>
        (RETRY_OUTCOMES as readonly string[]).includes(o),
      ),
    };
    const definition: CampaignDefinition = {
      agent,
      ...(pathway ? { pathway } : {}),
      from,
      schedule,
      retry,
      voicemail: input.voicemail ?? 'leave_message',
    };
    const webhook = input.webhook !== undefined ? this.deps.webhooks.checkUrl(input.webhook) : null;
    if (webhook) await this.deps.webhooks.ensureSecret(userId);
    const now = clock.now();
    const id = newId(now);
    const contacts = await this.contactsOf(userId, id, input.contacts, now);
    // A pathway, persona, knowledge base or tool a call could not use is refused now (404, 422), not at each call.
    await this.deps.checkCall(userId, definition, contacts[0]!);
    const callsPerMinute = input.pacing?.callsPerMinute ?? 10;
    const maxConcurrent = input.pacing?.maxConcurrent ?? this.deps.defaultMaxConcurrent;
    const budgetCents = input.budgetUsd !== undefined ? Math.round(input.budgetUsd * 100) : null;
    await store.insert(
      {
        id,
        user_id: userId,
        name: input.name,
        status: 'draft',
        reason: null,
        definition: secretBox.seal(JSON.stringify(definition)),
        object_id: null,
        calls_per_minute: callsPerMinute,
        max_concurrent: maxConcurrent,
        next_dial_at: now,
        budget_cents: budgetCents,
        spent_cents: 0,
        attempts: 0,
        webhook_url: webhook,
        changed_at: now,
        status_event_at: now,
        created_at: now,
        started_at: null,
        ended_at: null,
      },
      contacts,
    );
    // The definition as the owner's record: the campaign with its contacts as resolved, sealed with the store's key.
    const record = {
      id,
      name: input.name,
      agent,
      ...(pathway ? { pathway } : {}),
      fromNumberIds: input.fromNumberIds,
      from,
      contacts: contacts.map((c) => ({
        index: c.idx,
        ...(c.contact_id ? { contactId: c.contact_id } : {}),
        name: c.name,
        phone: c.phone,
        ...(c.fields ? { fields: JSON.parse(c.fields) } : {}),
        ...(c.timezone ? { timezone: c.timezone } : {}),
      })),
      ...(input.schedule ? { schedule: input.schedule } : {}),
      pacing: { callsPerMinute, maxConcurrent },
      retry,
      voicemail: definition.voicemail,
      ...(input.budgetUsd !== undefined ? { budgetUsd: input.budgetUsd } : {}),
      ...(webhook ? { webhook } : {}),
      createdAt: iso(now),
    };
    const object = await records.create(userId, 'campaigns', Buffer.from(JSON.stringify(record), 'utf8'));
    await store.setObjectId(id, object.id);
    return { id, status: 'draft', objectId: object.id };
  }

  private async agentOf(userId: string, input: CampaignInput): Promise<AgentRecord> {
    if ((input.agentId === undefined) === (input.agent === undefined))
      throw invalidInput('send exactly one of agentId (an object of your agents store) and agent (an agent record)');
    if (input.agent !== undefined) {
      const agent = parseAgentRecord(input.agent);
      if (!agent) throw invalidInput('agent must be an agent record: an object with at least a name');
      return agent;
    }
    const plain = await this.deps.records.read(userId, 'agents', input.agentId!);
    let agent: AgentRecord | null = null;
    try {
      agent = parseAgentRecord(JSON.parse(plain.toString('utf8')));
    } catch {
      agent = null;
    }
    if (!agent) throw invalidInput(`agent ${input.agentId} is not an agent record: JSON with at least a name`);
    return agent;
  }

  /** The contacts as rows: a `{ contactId }` is read from the owner's contacts store (404 when not theirs). */
  private async contactsOf(
    userId: string,
    campaignId: string,
    input: CampaignInput['contacts'],
    now: number,
  ): Promise<CampaignContactsTable[]> {
    const rows: CampaignContactsTable[] = [];
    for (const [i, entry] of input.entries()) {
      let c: {
        name: string;
        phone: string;
        fields?: Record<string, unknown>;
        timezone?: string;
        sandboxScript?: unknown;
      };
      let contactId: string | null = null;
      if ('contactId' in entry) {
        contactId = entry.contactId;
        let stored: Record<string, unknown> | null = null;
        try {
          stored = JSON.parse((await this.deps.records.read(userId, 'contacts', contactId)).toString('utf8'));
        } catch (err) {
          if (err instanceof AppError) throw err;
        }
        const phone = stored?.phone ?? stored?.phoneNumber;
        if (!stored || typeof stored.name !== 'string' || typeof phone !== 'string')
          throw invalidInput(`contacts[${i}]: contact ${contactId} is not a contact record { name, phone }`);
        c = {
          name: stored.name,
          phone,
          ...(typeof stored.fields === 'object' && stored.fields
            ? { fields: stored.fields as Record<string, unknown> }
            : {}),
          ...(typeof stored.timezone === 'string' ? { timezone: stored.timezone } : {}),
        };
      } else c = entry;
      if (!E164.test(c.phone)) throw invalidCampaign(`contacts[${i}].phone must be an E.164 number`);
      if (c.timezone !== undefined && !validZone(c.timezone))
        throw invalidCampaign(`contacts[${i}].timezone ${c.timezone} is not a time zone`);
      const fields: Record<string, unknown> = { ...(c.fields ?? {}) };
      if (c.sandboxScript !== undefined) fields.sandboxScript = c.sandboxScript;
      rows.push({
        campaign_id: campaignId,
        idx: i,
        contact_id: contactId,
        name: c.name.slice(0, 200),
        phone: c.phone,
        fields: Object.keys(fields).length ? JSON.stringify(fields) : null,
        timezone: c.timezone ?? null,
        status: 'pending',
        attempt_count: 0,
        next_attempt_at: now,
        claimed_by: null,
        claimed_until: null,
        session_id: null,
        updated_at: now,
      });
    }
    return rows;
  }

  private async owned(userId: string, id: string): Promise<CampaignsTable> {
    const row = await this.deps.store.find(id);
    if (!row || row.user_id !== userId) throw notFound('campaign');
    return row;
  }

  async counts(ids: string[]): Promise<Map<string, CampaignCounts>> {
    const byStatus = await this.deps.store.counts(ids);
    return new Map(
      ids.map((id) => {
        const counts = emptyCounts();
        for (const [status, n] of byStatus.get(id) ?? []) {
          counts[status] = n;
          counts.total += n;
        }
        return [id, counts];
      }),
    );
  }

  private view(row: CampaignsTable, counts: CampaignCounts): CampaignView {
    return {
      id: row.id,
      name: row.name,
      status: row.status,
      ...(row.reason ? { reason: row.reason } : {}),
      counts,
      attempts: row.attempts,
      spentUsd: row.spent_cents / 100,
      ...(row.budget_cents !== null ? { budgetUsd: row.budget_cents / 100 } : {}),
      pacing: { callsPerMinute: row.calls_per_minute, maxConcurrent: row.max_concurrent },
      ...(row.object_id ? { objectId: row.object_id } : {}),
      createdAt: iso(row.created_at),
      ...(row.started_at !== null ? { startedAt: iso(row.started_at) } : {}),
      ...(row.ended_at !== null ? { endedAt: iso(row.ended_at) } : {}),
    };
  }

  async get(userId: string, id: string): Promise<CampaignView> {
    const row = await this.owned(userId, id);
    return this.view(row, (await this.counts([id])).get(id)!);
  }

  async list(
    userId: string,
    page: { before?: string; limit: number },
  ): Promise<{ items: CampaignView[]; next?: string }> {
    const rows = await this.deps.store.listForUser(userId, page.before ?? null, page.limit + 1);
    const shown = rows.slice(0, page.limit);
    const counts = await this.counts(shown.map((r) => r.id));
    const items = shown.map((r) => this.view(r, counts.get(r.id)!));
    return rows.length > page.limit ? { items, next: items.at(-1)!.id } : { items };
  }

  async contacts(
    userId: string,
    id: string,
    query: { status?: ContactStatus; cursor?: string; limit: number },
  ): Promise<{ items: CampaignContactView[]; next?: string }> {
    await this.owned(userId, id);
    const after = query.cursor !== undefined ? Number(query.cursor) : -1;
    if (!Number.isInteger(after)) throw invalidInput('cursor must be the next of the previous page');
    const rows = await this.deps.store.listContacts(id, query.status ?? null, after, query.limit + 1);
    const shown = rows.slice(0, query.limit);
    const attempts = await this.deps.store.attemptsOf(
      id,
      shown.map((r) => r.idx),
    );
    const items = shown.map((r) => ({
      index: r.idx,
      ...(r.contact_id ? { contactId: r.contact_id } : {}),
      name: r.name,
      phone: r.phone,
      status: r.status,
      attempts: attempts
        .filter((a) => a.idx === r.idx)
        .map((a) => ({ sessionId: a.session_id, ...(a.outcome ? { outcome: a.outcome } : {}), at: iso(a.at) })),
      ...(r.status === 'pending' ? { nextAttemptAt: iso(r.next_attempt_at) } : {}),
    }));
    return rows.length > query.limit ? { items, next: String(items.at(-1)!.index) } : { items };
  }

  /** start | pause | resume | cancel by the owner: 409 `invalid_state` for a move the status does not allow. */
  async move(userId: string, id: string, move: Move): Promise<CampaignView> {
    const row = await this.owned(userId, id);
    const { from, to } = MOVES[move];
    if (!from.includes(row.status))
      throw new AppError('invalid_state', `a ${row.status} campaign cannot ${move}`, { status: row.status });
    if (to === 'running') {
      // The first contact still to call (the pacing's first dial) must be payable: allowance or one minute of balance.
      const first = (await this.deps.store.listContacts(id, 'pending', -1, 1))[0];
      if (first) {
        const paid = await this.deps.affordable(userId, first.phone);
        if (!paid.ok) throw new AppError('insufficient_funds', paid.message);
      }
    }
    const now = this.deps.clock.now();
    const set =
      move === 'start'
        ? { started_at: now, next_dial_at: now, reason: null }
        : move === 'cancel'
          ? { ended_at: now }
          : move === 'resume'
            ? { reason: null, next_dial_at: now }
            : { reason: null };
    if (!(await this.changeStatus(row, from, to, set, null)))
      throw new AppError('invalid_state', `the campaign changed meanwhile: try again`);
    return this.get(userId, id);
  }

  /** Only when not running (409 otherwise). */
  async delete(userId: string, id: string): Promise<void> {
    const row = await this.owned(userId, id);
    if (row.status === 'running')
      throw new AppError('invalid_state', 'a running campaign cannot be deleted: pause or cancel it first', {
        status: row.status,
      });
    await this.deps.store.delete(id);
    this.definitions.delete(id);
  }

  /**
   * Moves the campaign from one of `from` to `to` with its event and webhook
   * delivery in the same transaction; false when its status was not one of
   * `from` any more (another instance moved it first).
   */
  async changeStatus(
    row: Pick<CampaignsTable, 'id' | 'user_id' | 'webhook_url'>,
    from: CampaignStatus[],
    to: CampaignStatus,
    set: Partial<Pick<CampaignsTable, 'reason' | 'started_at' | 'ended_at' | 'next_dial_at'>>,
    reason: string | null,
  ): Promise<boolean> {
    const { store, events, webhooks, clock } = this.deps;
    const now = clock.now();
    const counts = (await this.counts([row.id])).get(row.id)!;
    const payload: CampaignStatusPayload = {
      campaign_id: row.id,
      status: to,
      ...(reason ? { reason } : {}),
      counts,
      at: iso(now),
    };
    const moved = await store.transaction(async (trx) => {
      if (!(await store.move(row.id, from, to, { ...set, ...(reason ? { reason } : {}) }, now, trx))) return false;
      await store.markStatusEvent(row.id, now, trx);
      await this.record(trx, row, payload);
      return true;
    });
    if (moved) {
      events.announce();
      if (row.webhook_url) webhooks.wake();
    }
    return moved;
  }

  /** A progress event while running (the dialer calls it at most once a second across instances). */
  async progress(row: Pick<CampaignsTable, 'id' | 'user_id' | 'webhook_url' | 'status' | 'reason'>): Promise<void> {
    const counts = (await this.counts([row.id])).get(row.id)!;
    const payload: CampaignStatusPayload = {
      campaign_id: row.id,
      status: row.status,
      ...(row.reason ? { reason: row.reason } : {}),
      counts,
      at: iso(this.deps.clock.now()),
    };
    await this.deps.store.transaction((trx) => this.record(trx, row, payload));
    this.deps.events.announce();
    if (row.webhook_url) this.deps.webhooks.wake();
  }

  private async record(
    trx: Parameters<Parameters<CampaignStore['transaction']>[0]>[0],
    row: Pick<CampaignsTable, 'user_id' | 'webhook_url'>,
    payload: CampaignStatusPayload,
  ): Promise<void> {
    await this.deps.events.record(trx, [{ userId: row.user_id, type: 'campaign_status', payload: { ...payload } }]);
    if (row.webhook_url)
      await this.deps.webhooks.enqueue(trx, [
        { userId: row.user_id, url: row.webhook_url, type: 'campaign_status', data: { ...payload } },
      ]);
  }
}
