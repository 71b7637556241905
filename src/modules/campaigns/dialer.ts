// The dialer (DESIGN.md "Campaigns"): every instance runs one, and they share
// the work through the database. Each round, for each running campaign, one
// instance claims what may be dialled now (CampaignStore.claim: the pacing
// slots due, the concurrency cap, business hours, the do-not-call list) and
// places each claimed contact's call through CallService.start, as POST
// /api/session/call does, so it is charged the same. A call's end (told by
// CallService.onFinished on whichever instance accounted for it) decides the
// contact: its final status, or a retry after the campaign's delay.
//
// Crashes: a claim whose call was never recorded goes back when its lease
// ends (returnExpiredClaims); a recorded call of a stopped instance ends
// `instance_stopped` through the calls area's orphan handling and its end
// decides as any other (a `failed` to the retry rule); a call whose end the
// campaign never heard of is looked up again (reconcile).
import { isDatabaseUnavailable } from '../../db/database.js';
import { AppError } from '../../http/errors.js';
import type { Clock, Timer, TimerClock } from '../../lib/clock.js';
import type { AssembledCall } from '../../providers/audio/interface.js';
import type { SandboxScript } from '../../providers/telephony/interface.js';
import type { CallService, CallStatusPayload } from '../calls/service.js';
import type { CallPayload, CallSessionService } from '../calls/session-service.js';
import { contactZone, isOpen, nextOpening } from './business-hours.js';
import { type CampaignDefinition, afterAttempt, contactOutcome } from './definition.js';
import type { DoNotCallService } from './do-not-call-service.js';
import { pacingSlots } from './pacing.js';
import type { CampaignService } from './service.js';
import type { CampaignStore, ClaimPlan, FinishedCampaign } from './store.js';
import type { CampaignContactsTable, CampaignsTable } from './tables.js';

export interface DialerSettings {
  /**
   * How often each instance looks for work (ms), on average: each wait is
   * tickMs × (0.5 + a random number in [0, 1)), so that instances' rounds do
   * not keep fixed phases (with a fixed interval the one whose rounds come
   * just after each pacing slot takes nearly every claim).
   */
  tickMs: number;
  /** How long a claim holds before its call is recorded (then it goes back). */
  leaseMs: number;
  /** Most contacts one round of one campaign claims. */
  maxBatch: number;
  /** Pacing time nobody dialled in that a late round still catches up (ms; see pacing.ts). */
  burstMs: number;
}

export const DEFAULT_DIALER_SETTINGS: DialerSettings = { tickMs: 250, leaseMs: 60_000, maxBatch: 50, burstMs: 1000 };

/** A call the campaign has not heard the end of after this long is looked up. */
const RECONCILE_AFTER_MS = 5 * 60_000;
/** How often claims and forgotten calls are checked. */
const SWEEP_EVERY_MS = 15_000;
/** At most one campaign_status progress event per campaign this often (ms), across instances. */
const STATUS_EVERY_MS = 1000;
/** A call refused for a passing reason (the account's concurrency limit, a race, the database away) is tried again after this. */
const BUSY_ACCOUNT_RETRY_MS = 5000;

export interface CampaignDialerDeps {
  store: CampaignStore;
  campaigns: CampaignService;
  /** Not used any more: a call's end reads the listing with its attempt (CampaignStore.findFinishing). */
  doNotCall?: DoNotCallService;
  calls: Pick<CallService, 'start' | 'outcome'>;
  sessions: Pick<CallSessionService, 'assemble'>;
  clock: Clock;
  instanceId: string;
  settings: DialerSettings;
  log: { warn(obj: unknown, msg: string): void };
  /** What the rounds wait on (tests: a ManualClock); default: the process's timers, not holding it open. */
  timers?: Pick<TimerClock, 'setTimeout'>;
  /** Each round's jitter, in [0, 1) (tests: fixed or seeded); default Math.random. */
  random?: () => number;
}

const processTimers: Pick<TimerClock, 'setTimeout'> = {
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

/** The contact's fields (strings) and its sandbox script (fields.sandboxScript: a list of lines, or lines in one string). */
function contactFields(contact: CampaignContactsTable): { fields: Record<string, string>; script?: SandboxScript } {
  const raw = contact.fields ? (JSON.parse(contact.fields) as Record<string, unknown>) : {};
  const fields: Record<string, string> = {};
  let script: SandboxScript | undefined;
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'sandboxScript') {
      const lines = Array.isArray(value) ? value : typeof value === 'string' ? value.split('\n') : [];
      const kept = lines.filter((l): l is string => typeof l === 'string' && l.trim() !== '').slice(0, 50);
      if (kept.length) script = kept;
    } else if (typeof value === 'string') fields[key] = value;
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = String(value);
  }
  return { fields, ...(script ? { script } : {}) };
}

/** The call of one contact of a campaign, as POST /api/session/call would assemble it. */
export async function campaignCall(
  sessions: Pick<CallSessionService, 'assemble'>,
  userId: string,
  definition: CampaignDefinition,
  contact: CampaignContactsTable,
): Promise<AssembledCall> {
  const { agent } = definition;
  const { fields, script } = contactFields(contact);
  const pathway =
    definition.pathway ?? agent.pathway ?? (agent.pathwayId !== undefined ? { id: agent.pathwayId } : undefined);
  const payload: CallPayload = {
    agent: {
      name: agent.name,
      ...(agent.personaId ? { personaId: agent.personaId } : {}),
      ...(agent.instructions ? { instructions: agent.instructions } : {}),
      ...(agent.firstMessage ? { firstMessage: agent.firstMessage } : {}),
      // hang_up: the agent hangs up at the beep, leaving nothing.
      ...(agent.voicemailMessage && definition.voicemail === 'leave_message'
        ? { voicemailMessage: agent.voicemailMessage }
        : {}),
    },
    contact: { name: contact.name, phone: contact.phone, ...(Object.keys(fields).length ? { fields } : {}) },
    type: pathway ? 'pathway' : 'prompt',
    ...(agent.prompt ? { prompt: agent.prompt } : {}),
    ...(pathway ? { pathway: pathway as Record<string, unknown> } : {}),
    ...(agent.knowledgeBaseId ? { knowledgeBase: { id: agent.knowledgeBaseId } } : {}),
    ...(agent.integrations?.length ? { integrations: agent.integrations } : {}),
    ...(Array.isArray(agent.tools) ? { tools: agent.tools } : {}),
  };
  const from = definition.from[contact.idx % definition.from.length]!;
  const call = await sessions.assemble(userId, payload, from);
  if (script) call.sandboxScript = script;
  return call;
}

export class CampaignDialer {
  private timer: Timer | null = null;
  private running: Promise<void> | null = null;
  private lastSweep = 0;
  private readonly placing = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly deps: CampaignDialerDeps) {}

  /** Rounds from now on, each tickMs × (0.5 + random()) after the one before; a round still running then is not doubled. */
  start(): void {
    if (this.timer) return;
    this.stopped = false;
    this.next();
  }

  private next(): void {
    const { settings, timers = processTimers, random = Math.random } = this.deps;
    this.timer = timers.setTimeout(
      () => {
        if (this.stopped) return;
        if (!this.running) this.running = this.round().finally(() => (this.running = null));
        this.next();
      },
      Math.round(settings.tickMs * (0.5 + random())),
    );
  }

  /** Stops looking for work and waits for the calls being placed (the app is closing). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.running;
    await Promise.allSettled([...this.placing]);
  }

  /** One round over every running campaign (tests call it directly on an injected clock). */
  async round(): Promise<void> {
    try {
      const now = this.deps.clock.now();
      if (now - this.lastSweep >= SWEEP_EVERY_MS) {
        this.lastSweep = now;
        await this.sweep();
      }
      const { settings } = this.deps;
      for (const c of await this.deps.store.running()) {
        if (this.stopped) return;
        // No pacing slot due and no progress event owed: nothing to claim or send (a call's end or a refused
        // placing completes or pauses the campaign by itself; the schedule's end waits for the next slot).
        const at = this.deps.clock.now();
        const eventOwed = c.status_event_at <= at - STATUS_EVERY_MS && c.changed_at > c.status_event_at;
        if (!eventOwed && pacingSlots(c.next_dial_at, at, c.calls_per_minute, settings.burstMs).due === 0) continue;
        await this.dial(c.id);
      }
    } catch (err) {
      // The database away (a PostgreSQL restart): nothing is claimed; the next round tries again.
      this.deps.log.warn({ err }, 'campaign dialer round failed');
    }
  }

  /** Waits for the round under way (started by the timers) and the calls this instance is placing (tests). */
  async settled(): Promise<void> {
    await this.running;
    await Promise.allSettled([...this.placing]);
  }

  private async dial(campaignId: string): Promise<void> {
    const { store, campaigns, clock, settings } = this.deps;
    const now = clock.now();
    let pause: string | null = null;
    let ended = false;
    const plan = (
      campaign: CampaignsTable,
      due: CampaignContactsTable[],
      slots: number,
      listed: Set<string>,
    ): ClaimPlan => {
      const def = campaigns.definition(campaign);
      const out: ClaimPlan = { claim: [], later: [], never: [] };
      if (def.schedule.endAt !== undefined && now >= def.schedule.endAt) {
        ended = true;
        return out;
      }
      if (campaign.budget_cents !== null && campaign.spent_cents >= campaign.budget_cents) {
        pause = 'budget_reached';
        return out;
      }
      for (const contact of due) {
        if (listed.has(contact.phone)) out.never.push(contact.idx);
        else if (out.claim.length < slots) {
          const zone = contactZone(contact, def.schedule);
          if (isOpen(now, zone, def.schedule)) out.claim.push(contact.idx);
          else out.later.push({ idx: contact.idx, at: nextOpening(now, zone, def.schedule) ?? now + 24 * 3600_000 });
        }
      }
      return out;
    };
    const result = await store.claim(
      campaignId,
      {
        instanceId: this.deps.instanceId,
        now,
        leaseUntil: now + settings.leaseMs,
        maxBatch: settings.maxBatch,
        burstMs: settings.burstMs,
        statusEveryMs: STATUS_EVERY_MS,
      },
      plan,
    );
    if (!result) return;
    const { campaign, claimed, calling, statusEvent } = result;
    for (const contact of claimed) this.track(this.place(campaign, contact));
    // A move of the status sends its own event.
    if (pause) await campaigns.changeStatus(campaign, ['running'], 'paused', {}, pause);
    else if (ended)
      await campaigns.changeStatus(campaign, ['running'], 'completed', { ended_at: now }, 'schedule_ended');
    else if (claimed.length === 0 && calling === 0 && (await this.completeIfDone(campaign))) return;
    else if (statusEvent) await campaigns.progress(campaign);
  }

  /** Keeps a placing call in view; its failure (the database away while it was released) is logged, never left unhandled: the claim's lease returns it. */
  private track(placing: Promise<void>): void {
    const p = placing.catch((err: unknown) =>
      this.deps.log.warn({ err }, 'campaign call neither placed nor released; its claim goes back after its lease'),
    );
    this.placing.add(p);
    void p.finally(() => this.placing.delete(p));
  }

  /** Places one claimed contact's call; a refusal before the call is recorded is decided here, anything after by the call's end. */
  private async place(campaign: CampaignsTable, contact: CampaignContactsTable): Promise<void> {
    const { store, campaigns, clock, instanceId } = this.deps;
    let recorded = false;
    try {
      const def = campaigns.definition(campaign);
      const call = await campaignCall(this.deps.sessions, campaign.user_id, def, contact);
      await this.deps.calls.start(campaign.user_id, call, null, {
        campaignId: campaign.id,
        onCreated: async (sessionId) => {
          // The claim must still be ours (its lease not given back): else the call is not placed.
          if (!(await store.attach(campaign.id, contact.idx, instanceId, sessionId, clock.now())))
            throw new Error('the claim on this contact ended before its call was recorded');
          recorded = true;
        },
      });
    } catch (err) {
      if (recorded) return;
      const now = clock.now();
      const code = err instanceof AppError ? err.code : null;
      if (code === 'do_not_call') {
        await store.release(
          campaign.id,
          contact.idx,
          instanceId,
          { status: 'do_not_call', nextAttemptAt: now, attemptBack: true },
          now,
        );
        await this.completeIfDone(campaign);
        return;
      }
      if (code === 'insufficient_funds') {
        await store.release(
          campaign.id,
          contact.idx,
          instanceId,
          { status: 'pending', nextAttemptAt: now, attemptBack: true },
          now,
        );
        await campaigns.changeStatus(campaign, ['running'], 'paused', {}, 'insufficient_funds');
        return;
      }
      // Refusals that pass: the account's concurrency limit, starts racing on another instance (409), the database away.
      if (code === 'concurrency_limit' || code === 'conflict' || code === 'not_ready' || isDatabaseUnavailable(err))
        return store.release(
          campaign.id,
          contact.idx,
          instanceId,
          { status: 'pending', nextAttemptAt: now + BUSY_ACCOUNT_RETRY_MS, attemptBack: true },
          now,
        );
      this.deps.log.warn({ err, campaignId: campaign.id, contact: contact.idx }, 'campaign call not placed');
      const def = campaigns.definition(campaign);
      // The claim raised attempt_count already: this was that attempt.
      const next = afterAttempt('failed', contact.attempt_count, def.retry, now);
      await store.release(campaign.id, contact.idx, instanceId, { ...next, attemptBack: false }, now);
      if (next.status !== 'pending') await this.completeIfDone(campaign);
    }
  }

  /** CallService.onFinished: a call of a campaign ended and was accounted for. */
  async callFinished(
    session: { id: string; userId: string },
    final: CallStatusPayload,
    accounted: { chargedCents: number | null },
  ): Promise<void> {
    if (!final.campaign_id) return;
    const { store, campaigns, clock } = this.deps;
    const found = await store.findFinishing(session.id);
    if (!found || found.attempt.outcome !== null) return;
    const { campaign, contact, listing } = found;
    const def = campaigns.definition(campaign);
    const optedOut = listing?.source === 'opt_out' && listing.session_id === session.id;
    const outcome = contactOutcome(final.outcome, final.status, optedOut);
    const now = clock.now();
    const next = optedOut
      ? { status: outcome, nextAttemptAt: now }
      : afterAttempt(outcome, contact.attempt_count, def.retry, now);
    const fresh = await store.finishAttempt(session.id, outcome, next, accounted.chargedCents ?? 0, now);
    if (fresh?.status !== 'running') return;
    if (fresh.budget_cents !== null && fresh.spent_cents >= fresh.budget_cents)
      await campaigns.changeStatus(fresh, ['running'], 'paused', {}, 'budget_reached');
    // Read after the end was recorded: of two last calls ending at once on two instances, the later one sees both.
    else if (next.status !== 'pending') await this.completeIfDone(fresh);
  }

  /** Completes the campaign when no contact is pending or calling; true when it did. */
  private async completeIfDone(campaign: Pick<FinishedCampaign, 'id' | 'user_id' | 'webhook_url'>): Promise<boolean> {
    if (await this.deps.store.hasOpenContacts(campaign.id)) return false;
    return this.deps.campaigns.changeStatus(
      campaign,
      ['running'],
      'completed',
      { ended_at: this.deps.clock.now() },
      null,
    );
  }

  /** Claims an instance left behind go back; calls whose end the campaign did not hear of are looked up. */
  async sweep(): Promise<void> {
    const { store, clock } = this.deps;
    const now = clock.now();
    await store.returnExpiredClaims(now);
    for (const { session_id } of await store.longCalling(now - RECONCILE_AFTER_MS, 100)) {
      const final = await this.deps.calls.outcome(session_id);
      const found = final ? await store.findFinishing(session_id) : null;
      // Its cost is not known here (the end was accounted for elsewhere): the spend misses it, the ledger has it.
      if (final && found)
        await this.callFinished(
          { id: session_id, userId: found.campaign.user_id },
          { ...final, campaign_id: found.campaign.id },
          { chargedCents: null },
        );
    }
  }
}
