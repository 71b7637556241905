// The built-in voice agent as the carrier of outbound calls (DESIGN.md "Voice
// agent"): the assembled call is kept with its session (sealed), Twilio is
// asked to dial with TwiML that connects the answered call's audio to our
// media WebSocket, and progress comes back through Twilio's signed callbacks
// and, once the stream runs, from the instance that carries it (both
// reported to the calls service directly: see create-services.ts).
import { AppError } from '../../http/errors.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { AssembledCall, AudioProvider } from '../../providers/audio/interface.js';
import type { CallControl } from '../../providers/telephony/interface.js';
import { MEDIA_TOKEN_TTL_SECONDS, type MediaTokens } from './media-tokens.js';
import { connectStreamTwiml } from '../../providers/telephony/twiml.js';
import { mediaStreamUrl } from './media-url.js';
import type { CallStore } from '../calls/store.js';

/** Without a limit of their own, calls end after 30 minutes (DESIGN.md "Voice agent"). */
export const DEFAULT_MAX_CALL_SECONDS = 30 * 60;
export const TWILIO_MEDIA_PATH = '/api/media/twilio';
/** How long an outbound call rings before Twilio gives up (no-answer). */
export const RING_TIMEOUT_SECONDS = 45;

export interface VoiceCarrierDeps {
  store: CallStore;
  control: CallControl;
  tokens: MediaTokens;
  secretBox: SecretBox;
  publicUrl: string;
  /** The number calls come from when the assembled call names none (TWILIO_FROM). */
  defaultFrom: string;
  /** true: the sandbox carrier places the calls (a simulated caller answers). */
  sandbox?: boolean;
  /** The sandbox carrier lives in this process: a call it rings dies with it, so it is marked as this instance's and kept alive by its heartbeat. */
  holder?: { instanceId: string; keepHeartbeat(): void; now(): number };
}

export class VoiceAgentCarrier implements AudioProvider {
  readonly name = 'voice-agent';
  readonly sandbox: boolean;

  constructor(private readonly deps: VoiceCarrierDeps) {
    this.sandbox = deps.sandbox ?? false;
  }

  /** Live-call control (hang-up, transfer) of the provider that placed the calls. */
  get control(): CallControl {
    return this.deps.control;
  }

  async startCall(sessionId: string, call: AssembledCall): Promise<{ providerCallId: string }> {
    const { store, control, tokens, secretBox, publicUrl } = this.deps;
    const session = await store.findSession(sessionId);
    if (!session) throw new AppError('not_found', 'call session not found');
    const { token, expiresAt } = await tokens.issue(
      session.user_id,
      sessionId,
      'twilio',
      MEDIA_TOKEN_TTL_SECONDS + RING_TIMEOUT_SECONDS,
    );
    await store.saveAssembled(sessionId, secretBox.seal(JSON.stringify(call)), expiresAt);
    const { callSid } = await control.placeCall({
      from: call.from ?? this.deps.defaultFrom,
      to: call.to,
      twiml: connectStreamTwiml(mediaStreamUrl(publicUrl, TWILIO_MEDIA_PATH), { token }),
      ringTimeoutSeconds: RING_TIMEOUT_SECONDS,
      statusCallbackUrl: `${publicUrl}/api/webhooks/twilio/call/${sessionId}`,
      machineDetectionUrl: `${publicUrl}/api/webhooks/twilio/amd/${sessionId}`,
      // Twilio's own backstop, a minute past ours.
      timeLimitSeconds: (call.maxDurationSeconds ?? DEFAULT_MAX_CALL_SECONDS) + 60,
      ...(call.sandboxScript ? { script: call.sandboxScript } : {}),
    });
    const { holder } = this.deps;
    if (this.sandbox && holder) {
      await store.setCarrierInstance(sessionId, holder.instanceId, holder.now());
      holder.keepHeartbeat();
    }
    return { providerCallId: callSid };
  }
}
