import type { Generated } from 'kysely';

/**
 * Append-only money ledger: the balance is the sum of a user's rows. Every row
 * has a unique `ref` (checkout session, reservation, refund), so a replayed
 * webhook or a retried request cannot move the balance twice. Rows are never
 * updated or deleted.
 */
export interface CreditLedgerTable {
  id: Generated<number>;
  user_id: string;
  /** Signed integer cents: credits positive, holds and charges negative. */
  cents: number;
  /** topup | topup_refund | hold | release | refund (a hold returned whole) */
  reason: string;
  ref: string;
  created_at: number;
}

/** A hold on the prepaid balance (its ledger row is `hold:<ref>`); settled or refunded once. */
export interface CreditReservationsTable {
  ref: string;
  user_id: string;
  cents: number;
  /** held | settled | refunded */
  state: string;
  used_cents: number | null;
  created_at: number;
  closed_at: number | null;
}

/** The payment provider's customer of a user, and the card on file. */
export interface BillingCustomersTable {
  user_id: string;
  provider: string;
  customer_id: string;
  /** Default payment method (card on file), null until a checkout saved one. */
  payment_method_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  created_at: number;
  updated_at: number;
}

/** Subscriptions: the user's plan (kind `plan`) and bought items such as phone numbers (kind `item`). */
export interface BillingSubscriptionsTable {
  id: string;
  user_id: string;
  kind: string;
  /** The caller's reference of an item subscription (unique); null for plans. */
  ref: string | null;
  /** The provider's subscription id (unique). */
  provider_subscription_id: string;
  plan_key: string | null;
  description: string;
  monthly_cents: number;
  /** active | trialing | past_due | incomplete | canceled … (the provider's status) */
  status: string;
  period_start: number | null;
  period_end: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * Checkout and portal sessions this service opened: the provider's session
 * refers back to the row's id, which names what was bought (amount, plan), so
 * a completion is checked against what was asked for.
 */
export interface BillingSessionsTable {
  id: string;
  user_id: string;
  /** topup | card | plan | upgrade | portal */
  purpose: string;
  amount_cents: number | null;
  plan_key: string | null;
  provider_session_id: string | null;
  return_to: string | null;
  /** open | complete */
  status: string;
  expires_at: number;
  created_at: number;
  completed_at: number | null;
  /** The page the customer was sent to (checkouts); null for older rows and portal sessions. */
  url?: string | null;
}

/** Provider events already handled (deduplication by event id). */
export interface BillingEventsTable {
  id: string;
  type: string;
  received_at: number;
}

/** Usage records (seconds, calls, leads), idempotent by (ref, kind). */
export interface BillingUsageTable {
  ref: string;
  kind: string;
  user_id: string;
  quantity: number;
  recorded_at: number;
}

/** A plan subscription moved from one plan to another at `at`; a period's allowance is prorated over its plans. */
export interface BillingPlanChangesTable {
  id: string;
  subscription_id: string;
  from_plan: string;
  to_plan: string;
  at: number;
}

export interface BillingTables {
  billing_plan_changes: BillingPlanChangesTable;
  credit_ledger: CreditLedgerTable;
  credit_reservations: CreditReservationsTable;
  billing_customers: BillingCustomersTable;
  billing_subscriptions: BillingSubscriptionsTable;
  billing_sessions: BillingSessionsTable;
  billing_events: BillingEventsTable;
  billing_usage: BillingUsageTable;
}
