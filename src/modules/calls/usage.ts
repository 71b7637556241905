// What the calls area asks of billing: usage counted once per reference. The
// same signature as BillingAccount.recordUsage, which billing implements.
import type { BillingAccount } from '../billing/account.js';

export type UsageRecorder = Pick<BillingAccount, 'recordUsage'>;
