// Picks each provider: real when its credentials are configured, otherwise
// the sandbox stand-in. Start-up logs one line per provider.
import type { Config } from '../config.js';
import type { ConnectorProvider } from './connector/interface.js';
import { HttpConnectorProvider } from './connector/http.js';
import { SandboxConnectorProvider } from './connector/sandbox.js';
import type { EmailProvider } from './email/interface.js';
import { SandboxEmailProvider } from './email/sandbox.js';
import { SmtpEmailProvider } from './email/smtp.js';
import type { Outbox } from './outbox.js';
import type { SmsProvider } from './sms/interface.js';
import { SandboxSmsProvider } from './sms/sandbox.js';
import { TwilioSmsProvider } from './sms/twilio.js';

export interface Providers {
  sms: SmsProvider;
  email: EmailProvider;
  connector: ConnectorProvider;
}

export function createProviders(config: Config, outbox: Outbox): Providers {
  return {
    sms: config.twilio ? new TwilioSmsProvider(config.twilio) : new SandboxSmsProvider(outbox),
    email: config.smtp ? new SmtpEmailProvider(config.smtp.url, config.smtp.from) : new SandboxEmailProvider(outbox),
    connector: config.connector.url
      ? new HttpConnectorProvider({ url: config.connector.url, token: config.connector.token, idleTimeoutMs: config.connector.idleTimeoutMs, maxFrameChars: config.objectContentLimitBytes })
      : new SandboxConnectorProvider(),
  };
}

/** True when any provider is a sandbox stand-in (the outbox route is then mounted). */
export const anySandbox = (providers: Providers): boolean => Object.values(providers).some((p) => p.sandbox);

export const describeProviders = (providers: Providers): string[] =>
  Object.entries(providers).map(([kind, p]) => `${kind}: ${p.name}${!p.sandbox ? '' : kind === 'connector' ? ' (sandbox stand-in; streams sample records, set CONNECTOR_URL)' : ' (sandbox stand-in; messages go to GET /api/sandbox/outbox)'}`);
