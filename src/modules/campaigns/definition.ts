// What a campaign is made of (DESIGN.md "Campaigns"), as POST /api/campaigns
// sends it and as the dialer keeps it: the checks the body schema cannot
// make (time zones, clock times, numbers), the defaults, and the retry and
// voicemail rules applied to each ended call.
import { AppError } from '../../http/errors.js';
import type { AgentRecord } from '../calls/agent-calls.js';
import { type Day, parseClock, type Schedule, validZone } from './business-hours.js';
import type { ContactStatus } from './tables.js';

export const RETRY_OUTCOMES = ['no_answer', 'busy', 'failed', 'voicemail'] as const;
export type RetryOutcome = (typeof RETRY_OUTCOMES)[number];

export interface CampaignInput {
  name: string;
  agentId?: string;
  agent?: Record<string, unknown>;
  pathwayId?: string;
  pathway?: Record<string, unknown>;
  fromNumberIds: string[];
  contacts: Array<
    | { contactId: string }
    | {
        name: string;
        phone: string;
        fields?: Record<string, string | string[]>;
        timezone?: string;
        sandboxScript?: string[];
      }
  >;
  schedule?: { timezone?: string; days?: Day[]; from?: string; to?: string; startAt?: string; endAt?: string };
  pacing?: { callsPerMinute?: number; maxConcurrent?: number };
  retry?: { maxAttempts?: number; delayMinutes?: number; on?: RetryOutcome[] };
  voicemail?: 'hang_up' | 'leave_message';
  budgetUsd?: number;
  webhook?: string;
}

/** What the dialer needs to place each call, kept sealed on the campaign's row. */
export interface CampaignDefinition {
  agent: AgentRecord;
  pathway?: Record<string, unknown>;
  /** The caller's numbers, in turn (E.164, checked when created). */
  from: string[];
  schedule: Schedule;
  retry: { maxAttempts: number; delayMinutes: number; on: RetryOutcome[] };
  voicemail: 'hang_up' | 'leave_message';
}

export const invalidCampaign = (message: string) => new AppError('invalid_campaign', message);

/** The schedule as the dialer reads it; 422 for a zone, clock time or range that is not one. */
export function parseSchedule(input: CampaignInput['schedule']): Schedule {
  const schedule: Schedule = {};
  if (!input) return schedule;
  if (input.timezone !== undefined) {
    if (!validZone(input.timezone)) throw invalidCampaign(`schedule.timezone ${input.timezone} is not a time zone`);
    schedule.timezone = input.timezone;
  }
  if (input.days) {
    if (input.days.length === 0) throw invalidCampaign('schedule.days must name at least one day');
    schedule.days = [...new Set(input.days)];
  }
  for (const key of ['from', 'to'] as const) {
    const value = input[key];
    if (value === undefined) continue;
    if (parseClock(value) === null) throw invalidCampaign(`schedule.${key} must be HH:MM (00:00 to 24:00)`);
    schedule[key] = value;
  }
  if ((parseClock(schedule.from ?? '00:00') ?? 0) >= (parseClock(schedule.to ?? '24:00') ?? 1440))
    throw invalidCampaign('schedule.from must be before schedule.to');
  for (const key of ['startAt', 'endAt'] as const) {
    const value = input[key];
    if (value === undefined) continue;
    const at = Date.parse(value);
    if (Number.isNaN(at)) throw invalidCampaign(`schedule.${key} must be an ISO 8601 time`);
    schedule[key] = at;
  }
  if (schedule.startAt !== undefined && schedule.endAt !== undefined && schedule.startAt >= schedule.endAt)
    throw invalidCampaign('schedule.startAt must be before schedule.endAt');
  return schedule;
}

/** A call's outcome as a contact's: what the retry rule and the final status speak of. */
export function contactOutcome(callOutcome: string | undefined, status: string, optedOut: boolean): ContactStatus {
  if (optedOut) return 'opted_out';
  switch (callOutcome) {
    case 'completed':
    case 'transferred':
    case 'max_duration':
      return 'completed';
    case 'voicemail':
      return 'voicemail';
    case 'no_answer':
      return 'no_answer';
    case 'busy':
      return 'busy';
    case undefined:
      // A call of an external audio server reports only its status.
      if (status === 'completed') return 'completed';
      if (status === 'busy') return 'busy';
      if (status === 'no_answer' || status === 'canceled') return 'no_answer';
      return 'failed';
    default:
      // provider_error, refused, instance_stopped (the retry policy treats it as failed).
      return 'failed';
  }
}

/** After an attempt ended with `outcome`: tried again later, or that is the contact's final status. */
export function afterAttempt(
  outcome: ContactStatus,
  attempts: number,
  retry: CampaignDefinition['retry'],
  now: number,
): { status: ContactStatus; nextAttemptAt: number } {
  const retryable = (retry.on as readonly string[]).includes(outcome);
  if (retryable && attempts < retry.maxAttempts)
    return { status: 'pending', nextAttemptAt: now + retry.delayMinutes * 60_000 };
  return { status: outcome, nextAttemptAt: now };
}
