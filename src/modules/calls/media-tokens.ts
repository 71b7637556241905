// The token a media stream presents (Twilio's `start.customParameters.token`,
// a web call's `?token=`): a service token bound to the call's session and
// owner, for one transport, valid 60 s, accepted once across instances.
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

export class MediaTokens {
  constructor(
    private readonly tokens: ServiceTokens,
    private readonly singleUse: SingleUseTokens,
  ) {}

  /** `ttlSeconds`: 60 from when the stream can first connect (an outbound call adds the time it may ring). */
  async issue(userId: string, sessionId: string, transport: MediaTransportKind, ttlSeconds = MEDIA_TOKEN_TTL_SECONDS): Promise<{ token: string; expiresAt: number }> {
    const { token, expiresAt } = await this.tokens.sign(`media-${transport}`, userId, { sid: sessionId }, ttlSeconds);
    return { token, expiresAt };
  }

  /** The session the token opens, once; `invalid_token` for anything forged, expired, of another transport, or spent. */
  async accept(token: string, transport: MediaTransportKind): Promise<AcceptedMediaToken> {
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
    if (!(await this.singleUse.spend('media-stream', accepted.jti, accepted.expiresAt))) throw refuse('already used');
    return { userId: subject, sessionId };
  }
}
