// Picks each provider: real when its credentials are configured, otherwise
// the sandbox stand-in. Start-up logs one line per provider.
import type { Config } from '../config.js';
import type { EmailProvider } from './email/interface.js';
import { SandboxEmailProvider } from './email/sandbox.js';
import { SmtpEmailProvider } from './email/smtp.js';
import type { Outbox } from './outbox.js';
import type { PaymentsProvider } from './payments/interface.js';
import { SandboxPaymentsProvider } from './payments/sandbox.js';
import type { SmsProvider } from './sms/interface.js';
import { TelephonyProviders } from './telephony/interface.js';
import { SandboxTelephonyProvider } from './telephony/sandbox.js';
import { TwilioTelephonyProvider } from './telephony/twilio.js';
import { createHmac } from 'node:crypto';
import { SandboxSmsProvider } from './sms/sandbox.js';
import { TwilioSmsProvider } from './sms/twilio.js';

export interface Providers {
  sms: SmsProvider;
  email: EmailProvider;
  payments: PaymentsProvider;
  telephony: TelephonyProviders;
}

/** The auth token that signs the sandbox's Twilio-style callbacks: derived from the master key, so every instance agrees and nobody outside can sign. */
export const sandboxTwilioToken = (masterKey: Buffer): string => createHmac('sha256', masterKey).update('sandbox twilio auth token').digest('hex');

export function createProviders(config: Config, outbox: Outbox, masterKey: Buffer): Providers {
  const telephony = [
    ...(config.twilio ? [new TwilioTelephonyProvider(config.twilio)] : []),
    // The sandbox is always offered, except in production next to a real provider.
    ...(config.env !== 'production' || !config.twilio ? [new SandboxTelephonyProvider(outbox, sandboxTwilioToken(masterKey), { callbackDelayMs: config.sandboxCallbackDelayMs })] : []),
  ];
  return {
    sms: config.twilio ? new TwilioSmsProvider(config.twilio) : new SandboxSmsProvider(outbox),
    email: config.smtp ? new SmtpEmailProvider(config.smtp.url, config.smtp.from) : new SandboxEmailProvider(outbox),
    payments: new SandboxPaymentsProvider(config.publicUrl),
    telephony: new TelephonyProviders(telephony),
  };
}

/** True when any provider is a sandbox stand-in (the outbox route is then mounted). */
export const anySandbox = (providers: Providers): boolean => Object.values(providers).some((p) => p.sandbox);

export const describeProviders = (providers: Providers): string[] =>
  Object.entries(providers).map(([kind, p]) => `${kind}: ${p.name}${p.sandbox ? ` (sandbox stand-in; ${sandboxNotes[kind] ?? 'messages go to GET /api/sandbox/outbox'})` : ''}`);

const sandboxNotes: Record<string, string> = {
  payments: 'checkout and portal pages are served at /api/sandbox/…',
  telephony: 'offline numbers; SMS go to GET /api/sandbox/outbox and their delivery callbacks to PUBLIC_URL',
};
