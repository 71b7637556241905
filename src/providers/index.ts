// Picks each provider: real when its credentials are configured, otherwise
// the sandbox stand-in. Start-up logs one line per provider.
import type { Config } from '../config.js';
import type { ConnectorProvider } from './connector/interface.js';
import { HttpConnectorProvider } from './connector/http.js';
import { SandboxConnectorProvider } from './connector/sandbox.js';
import { type Clock, systemClock } from '../lib/clock.js';
import { generateWebhookSecret } from '../lib/standard-webhooks.js';
import { HttpAudioProvider } from './audio/http.js';
import type { AudioProvider } from './audio/interface.js';
import { SandboxAudioProvider } from './audio/sandbox.js';
import type { EmailProvider } from './email/interface.js';
import { SandboxEmailProvider } from './email/sandbox.js';
import { SmtpEmailProvider } from './email/smtp.js';
import type { Outbox } from './outbox.js';
import type { PaymentsProvider, PlanPrice } from './payments/interface.js';
import { SandboxPaymentsProvider } from './payments/sandbox.js';
import { StripePaymentsProvider } from './payments/stripe.js';
import { CalendlySchedulingProvider } from './scheduling/calendly.js';
import type { SchedulingProvider } from './scheduling/interface.js';
import { SandboxSchedulingProvider } from './scheduling/sandbox.js';
import { ElevenLabsVoiceProvider } from './voice/elevenlabs.js';
import type { VoiceProviders } from './voice/interface.js';
import { LocalSpeechProvider, locateEspeakNg } from './voice/local.js';
import type { SmsProvider } from './sms/interface.js';
import { TelephonyProviders } from './telephony/interface.js';
import { SandboxTelephonyProvider } from './telephony/sandbox.js';
import { TwilioTelephonyProvider } from './telephony/twilio.js';
import { createHmac, randomBytes } from 'node:crypto';
import { SandboxSmsProvider } from './sms/sandbox.js';
import { TwilioSmsProvider } from './sms/twilio.js';

export interface Providers {
  sms: SmsProvider;
  email: EmailProvider;
  payments: PaymentsProvider;
  telephony: TelephonyProviders;
  voice: VoiceProviders;
  scheduling: SchedulingProvider;
  connector: ConnectorProvider;
  audio: AudioProvider;
}

/** The auth token that signs the sandbox's Twilio-style callbacks: derived from the master key, so every instance agrees and nobody outside can sign. */
export const sandboxTwilioToken = (masterKey: Buffer): string =>
  createHmac('sha256', masterKey).update('sandbox twilio auth token').digest('hex');

/**
 * `masterKey` keys the sandbox telephony's callback signatures; without it (tools, tests) a random one lives as long as these providers.
 * `plans`: the billing plans, so the payment provider can name the plan of a subscription's price.
 * `audioSecret`: the secret audio reports are verified with (AUDIO_SERVER_SECRET, or in sandbox mode one generated for this process).
 */
export function createProviders(
  config: Config,
  outbox: Outbox,
  masterKey: Buffer = randomBytes(32),
  plans: PlanPrice[] = [],
  clock: Clock = systemClock,
  audioSecret = config.audio.secret ?? generateWebhookSecret(),
): Providers {
  const telephony = [
    ...(config.twilio ? [new TwilioTelephonyProvider(config.twilio)] : []),
    // The sandbox is always offered, except in production next to a real provider.
    ...(config.env !== 'production' || !config.twilio
      ? [
          new SandboxTelephonyProvider(outbox, sandboxTwilioToken(masterKey), {
            callbackDelayMs: config.sandboxCallbackDelayMs,
            calls: { replyTimeoutMs: config.sandboxCallerPatienceMs },
          }),
        ]
      : []),
  ];
  return {
    sms: config.twilio ? new TwilioSmsProvider(config.twilio) : new SandboxSmsProvider(outbox),
    email: config.smtp ? new SmtpEmailProvider(config.smtp.url, config.smtp.from) : new SandboxEmailProvider(outbox),
    payments: config.billing.stripe
      ? new StripePaymentsProvider(config.billing.stripe, plans)
      : new SandboxPaymentsProvider(config.publicUrl),
    telephony: new TelephonyProviders(telephony),
    voice: createVoiceProviders(config.elevenlabs),
    scheduling: config.calendly
      ? new CalendlySchedulingProvider(config.calendly.apiBase)
      : new SandboxSchedulingProvider(),
    connector: config.connector.url
      ? new HttpConnectorProvider({
          url: config.connector.url,
          token: config.connector.token,
          idleTimeoutMs: config.connector.idleTimeoutMs,
          maxFrameChars: config.objectContentLimitBytes,
        })
      : new SandboxConnectorProvider(),
    audio: config.audio.url
      ? new HttpAudioProvider({ url: config.audio.url, secret: audioSecret }, clock)
      : new SandboxAudioProvider(audioSecret, config.audio.sandboxStepMs, clock),
  };
}

/** Local speech (espeak-ng) always; ElevenLabs too when its key is set. Neither is a stand-in. */
export function createVoiceProviders(elevenlabs: Config['elevenlabs']): VoiceProviders {
  const external = elevenlabs ? new ElevenLabsVoiceProvider(elevenlabs) : null;
  let local = 'espeak-ng (local, WebAssembly)';
  try {
    locateEspeakNg();
  } catch {
    local = 'espeak-ng MISSING (run npm install: local personas cannot speak)';
  }
  return {
    name: `${local}${external ? ' + elevenlabs' : '; set ELEVENLABS_API_KEY for ElevenLabs voices'}`,
    sandbox: false,
    local: new LocalSpeechProvider(),
    external,
  };
}

/** True when any provider is a sandbox stand-in (the outbox route is then mounted). */
export const anySandbox = (providers: Providers): boolean => Object.values(providers).some((p) => p.sandbox);

export const describeProviders = (providers: Providers): string[] =>
  Object.entries(providers).map(([kind, p]) => describeProvider(kind, p));

/** Only the sandbox stand-ins, one line each (what a production start refuses or warns about; real providers such as the local espeak-ng voice are not named). */
export const describeSandboxes = (providers: Providers): string[] =>
  Object.entries(providers)
    .filter(([, p]) => p.sandbox)
    .map(([kind, p]) => describeProvider(kind, p));

const describeProvider = (kind: string, p: { name: string; sandbox: boolean }): string =>
  `${kind}: ${p.name}${p.sandbox ? ` (sandbox stand-in${sandboxNotes[kind] ? `; ${sandboxNotes[kind]}` : ''})` : ''}`;

/** Where people trying the API see what a stand-in did. */
const sandboxNotes: Record<string, string> = {
  sms: 'messages go to GET /api/sandbox/outbox',
  email: 'messages go to GET /api/sandbox/outbox',
  payments: 'checkout and portal pages are served at /api/sandbox/…',
  telephony: 'offline numbers; SMS go to GET /api/sandbox/outbox and their delivery callbacks to PUBLIC_URL',
  connector: 'streams sample records; set CONNECTOR_URL',
  audio:
    'calls are answered by a simulated caller over loopback (SANDBOX_CALLS=voice; timer: status steps only); set Twilio or AUDIO_SERVER_URL',
};
