// Picks each provider: real when its credentials are configured, otherwise
// the sandbox stand-in. Start-up logs one line per provider.
import type { Config } from '../config.js';
import type { EmailProvider } from './email/interface.js';
import { SandboxEmailProvider } from './email/sandbox.js';
import { SmtpEmailProvider } from './email/smtp.js';
import type { Outbox } from './outbox.js';
import type { PaymentsProvider, PlanPrice } from './payments/interface.js';
import { SandboxPaymentsProvider } from './payments/sandbox.js';
import { StripePaymentsProvider } from './payments/stripe.js';
import type { SmsProvider } from './sms/interface.js';
import { SandboxSmsProvider } from './sms/sandbox.js';
import { TwilioSmsProvider } from './sms/twilio.js';

export interface Providers {
  sms: SmsProvider;
  email: EmailProvider;
  payments: PaymentsProvider;
}

/** `plans`: the billing plans, so the payment provider can name the plan of a subscription's price. */
export function createProviders(config: Config, outbox: Outbox, plans: PlanPrice[] = []): Providers {
  return {
    sms: config.twilio ? new TwilioSmsProvider(config.twilio) : new SandboxSmsProvider(outbox),
    email: config.smtp ? new SmtpEmailProvider(config.smtp.url, config.smtp.from) : new SandboxEmailProvider(outbox),
    payments: config.billing.stripe ? new StripePaymentsProvider(config.billing.stripe, plans) : new SandboxPaymentsProvider(config.publicUrl),
  };
}

/** True when any provider is a sandbox stand-in (the outbox route is then mounted). */
export const anySandbox = (providers: Providers): boolean => Object.values(providers).some((p) => p.sandbox);

export const describeProviders = (providers: Providers): string[] =>
  Object.entries(providers).map(([kind, p]) => `${kind}: ${p.name}${p.sandbox ? ` (sandbox stand-in; ${sandboxNotes[kind] ?? 'messages go to GET /api/sandbox/outbox'})` : ''}`);

const sandboxNotes: Record<string, string> = { payments: 'checkout and portal pages are served at /api/sandbox/…' };
