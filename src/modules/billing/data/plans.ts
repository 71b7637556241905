// Built-in plans (PLANS_FILE replaces them). Prices in whole US cents per
// month; included quantities per billing period (spec 2.17).
// The shape of a plan is declared here, beside the data; catalog.ts checks files against it.
import type { UsageKind } from '../account.js';

export interface PlanDefinition {
  key: string;
  name: string;
  /** Per month, in US dollars (whole cents). */
  priceUsd: number;
  included: Record<UsageKind, number>;
  /** A recurring price created at Stripe for this plan; without it the Stripe adapter finds or creates one by lookup key. */
  stripePriceId?: string;
  /** Calls under way at once on this plan, when more than CALL_CONCURRENCY_PER_USER. */
  callConcurrency?: number;
}

export const defaultPlans: PlanDefinition[] = [
  {
    key: 'starter',
    name: 'Starter',
    priceUsd: 29,
    included: { seconds_inbound: 3_000, seconds_outbound: 3_000, calls_inbound: 100, calls_outbound: 100, leads: 100 },
  },
  {
    key: 'growth',
    name: 'Growth',
    priceUsd: 99,
    included: {
      seconds_inbound: 18_000,
      seconds_outbound: 18_000,
      calls_inbound: 500,
      calls_outbound: 500,
      leads: 1_000,
    },
  },
  {
    key: 'scale',
    name: 'Scale',
    priceUsd: 299,
    included: {
      seconds_inbound: 60_000,
      seconds_outbound: 60_000,
      calls_inbound: 2_000,
      calls_outbound: 2_000,
      leads: 5_000,
    },
  },
];
