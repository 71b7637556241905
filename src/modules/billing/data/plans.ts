// Built-in plans (PLANS_FILE replaces them). Prices in whole US cents per
// month; included quantities per billing period (spec 2.17).
import type { PlanDefinition } from '../catalog.js';

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
    included: { seconds_inbound: 18_000, seconds_outbound: 18_000, calls_inbound: 500, calls_outbound: 500, leads: 1_000 },
  },
  {
    key: 'scale',
    name: 'Scale',
    priceUsd: 299,
    included: { seconds_inbound: 60_000, seconds_outbound: 60_000, calls_inbound: 2_000, calls_outbound: 2_000, leads: 5_000 },
  },
];
