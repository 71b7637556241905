// The token a media stream presents (Twilio's `start.customParameters.token`,
// a web call's `?token=`): a service token bound to the call's session and
// owner, for one transport, valid 60 s, accepted once across instances. A
// Twilio stream is also bound to the carrier's call: its `start.callSid` must
// be the call the session placed or answered (issue 46: one session's token,
// presented with another call's CallSid, hung that call up).
import { decodeJwt } from 'jose';
import { AppError } from '../../http/errors.js';
import type { ServiceTokens } from '../data/service-tokens.js';
import type { SingleUseTokens } from '../platform/single-use.js';

export const MEDIA_TOKEN_TTL_SECONDS = 60;
export type MediaTransportKind = 'twilio' | 'web';

export interface AcceptedMediaToken {
  userId: string;
  sessionId: string;
}

/** The carrier's call a Twilio stream says it carries, and where to find the call its session is for. */
export interface CarrierCallClaim {
  /** `start.callSid`. */
  callSid: string;
  /** The session's carrier call id (call_sessions.provider_call_id); null while not known yet. */
  callOf(sessionId: string): Promise<string | null>;
}

/**
 * How long a stream waits for its session's call id: an outbound session
 * stores it when Calls.json answers, which Twilio does long before the call
 * is answered and streams, but the sandbox carrier can connect sooner.
 */
const CALL_ID_WAIT_MS = 2000;
const CALL_ID_POLL_MS = 100;

export class MediaTokens {
  constructor(
    private readonly tokens: ServiceTokens,
    private readonly singleUse: SingleUseTokens,
  ) {}

  /** `ttlSeconds`: 60 from when the stream can first connect (an outbound call adds the time it may ring). */
  async issue(
    userId: string,
    sessionId: string,
    transport: MediaTransportKind,
    ttlSeconds = MEDIA_TOKEN_TTL_SECONDS,
  ): Promise<{ token: string; expiresAt: number }> {
    const { token, expiresAt } = await this.tokens.sign(`media-${transport}`, userId, { sid: sessionId }, ttlSeconds);
    return { token, expiresAt };
  }

  /**
   * The session the token opens, once; `invalid_token` for anything forged,
   * expired, of another transport, or spent, and for a Twilio stream whose
   * CallSid is not its session's call (checked before the token is spent, so
   * the carrier's own stream can still use it).
   */
  accept(token: string, transport: 'web'): Promise<AcceptedMediaToken>;
  accept(token: string, transport: 'twilio', call: CarrierCallClaim): Promise<AcceptedMediaToken>;
  async accept(token: string, transport: MediaTransportKind, call?: CarrierCallClaim): Promise<AcceptedMediaToken> {
    const refuse = (why: string) => new AppError('invalid_token', `media token refused: ${why}`);
    let subject: unknown;
    try {
      subject = decodeJwt(token).sub;
    } catch {
      throw refuse('malformed');
    }
    // The subject only picks what to check against; the signature check below decides.
    if (typeof subject !== 'string') throw refuse('malformed');
    const accepted = await this.tokens.verify(token, `media-${transport}`, subject, refuse);
    const sessionId = accepted.claims.sid;
    if (typeof sessionId !== 'string') throw refuse('malformed');
    if (transport === 'twilio') {
      if (!call) throw refuse('no call to bind it to');
      const expected = await callIdOf(call, sessionId);
      if (expected === null) throw refuse('its call has no carrier call id');
      if (expected !== call.callSid) throw refuse('it belongs to another call');
    }
    if (!(await this.singleUse.spend('media-stream', accepted.jti, accepted.expiresAt))) throw refuse('already used');
    return { userId: subject, sessionId };
  }
}

/** The session's carrier call id, waiting up to CALL_ID_WAIT_MS for it to be stored. */
async function callIdOf(call: CarrierCallClaim, sessionId: string): Promise<string | null> {
  for (let waited = 0; ; waited += CALL_ID_POLL_MS) {
    const id = await call.callOf(sessionId);
    if (id !== null || waited >= CALL_ID_WAIT_MS) return id;
    await new Promise((resolve) => setTimeout(resolve, CALL_ID_POLL_MS));
  }
}
