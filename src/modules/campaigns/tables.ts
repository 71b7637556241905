// Campaigns, their contacts and attempts, and the do-not-call list (migration 520).

export type CampaignStatus = 'draft' | 'running' | 'paused' | 'completed' | 'cancelled';

/** A contact's status: pending and calling are on the way; every other one is final. */
export const CONTACT_STATUSES = [
  'pending',
  'calling',
  'completed',
  'voicemail',
  'no_answer',
  'busy',
  'failed',
  'opted_out',
  'do_not_call',
] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

export interface CampaignsTable {
  id: string;
  user_id: string;
  name: string;
  status: CampaignStatus;
  reason: string | null;
  /** CampaignDefinition JSON sealed with the master key. */
  definition: string;
  object_id: string | null;
  calls_per_minute: number;
  max_concurrent: number;
  next_dial_at: number;
  budget_cents: number | null;
  spent_cents: number;
  attempts: number;
  webhook_url: string | null;
  changed_at: number;
  status_event_at: number;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
}

export interface CampaignContactsTable {
  campaign_id: string;
  idx: number;
  contact_id: string | null;
  name: string;
  phone: string;
  fields: string | null;
  timezone: string | null;
  status: ContactStatus;
  attempt_count: number;
  next_attempt_at: number;
  claimed_by: string | null;
  claimed_until: number | null;
  session_id: string | null;
  updated_at: number;
}

export interface CampaignAttemptsTable {
  session_id: string;
  campaign_id: string;
  idx: number;
  attempt: number;
  outcome: string | null;
  at: number;
}

export interface DoNotCallTable {
  user_id: string;
  phone: string;
  reason: string | null;
  source: 'api' | 'opt_out';
  session_id: string | null;
  created_at: number;
}

export interface CampaignTables {
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  campaign_attempts: CampaignAttemptsTable;
  do_not_call: DoNotCallTable;
}
