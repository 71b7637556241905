// Picks each provider: real when its credentials are configured, otherwise
// the sandbox stand-in. Start-up logs one line per provider.
import type { Config } from '../config.js';
import { type Clock, systemClock } from '../lib/clock.js';
import { generateWebhookSecret } from '../lib/standard-webhooks.js';
import { HttpAudioProvider } from './audio/http.js';
import type { AudioProvider } from './audio/interface.js';
import { SandboxAudioProvider } from './audio/sandbox.js';
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
  audio: AudioProvider;
}

/**
 * `audioSecret`: the secret audio reports are verified with (AUDIO_SERVER_SECRET,
 * or in sandbox mode one generated for this process).
 */
export function createProviders(config: Config, outbox: Outbox, clock: Clock = systemClock, audioSecret = config.audio.secret ?? generateWebhookSecret()): Providers {
  return {
    sms: config.twilio ? new TwilioSmsProvider(config.twilio) : new SandboxSmsProvider(outbox),
    email: config.smtp ? new SmtpEmailProvider(config.smtp.url, config.smtp.from) : new SandboxEmailProvider(outbox),
    audio: config.audio.url ? new HttpAudioProvider({ url: config.audio.url, secret: audioSecret }, clock) : new SandboxAudioProvider(audioSecret, config.audio.sandboxStepMs, clock),
  };
}

/** True when any provider is a sandbox stand-in (the outbox route is then mounted). */
export const anySandbox = (providers: Providers): boolean => Object.values(providers).some((p) => p.sandbox);

export const describeProviders = (providers: Providers): string[] =>
  Object.entries(providers).map(([kind, p]) => `${kind}: ${p.name}${!p.sandbox ? '' : kind === 'audio' ? ' (sandbox stand-in; calls are played in process)' : ' (sandbox stand-in; messages go to GET /api/sandbox/outbox)'}`);
