// What the two media WebSocket routes do with a socket (DESIGN.md "Voice
// agent", "Calls from a browser"): admission's rules until its token is
// accepted (media-admission.ts), the token checked, then the call carried by
// the runner with the live-call control of its carrier. The routes hand the
// socket over and nothing more.
import { AppError } from '../../http/errors.js';
import type { CallControl } from '../../providers/telephony/interface.js';
import type { CallStore } from '../calls/store.js';
import type { DialledLegs } from '../calls/transfers.js';
import { redirectToLeg } from '../calls/transfers.js';
import { TwilioTransport, WebTransport } from '../voice/transport.js';
import { MEDIA_MAX_PAYLOAD_BYTES, type MediaAdmission, type MediaSocket } from './media-admission.js';
import type { MediaTokens } from './media-tokens.js';
import type { VoiceRunner } from './runner.js';

export interface MediaSocketDeps {
  admission: MediaAdmission;
  tokens: MediaTokens;
  /** The session's row: a stream's CallSid must be the call it placed or answered. */
  store: Pick<CallStore, 'findSession'>;
  /** Live-call control of the carrier of a call. */
  controlFor(callSid: string): CallControl | null;
  runner: Pick<VoiceRunner, 'run'>;
  /** Transfers' billed legs: a leg is marked dialled once the carrier has the `<Dial>`. */
  legs: Pick<DialledLegs, 'markDialled'> | null;
  /** A browser's socket was accepted (the web call's own connect timer stops). */
  webConnected(sessionId: string): void;
}

/** The route's logger (a stream that fails is logged with the app's requests). */
type Log = { warn(obj: unknown, msg: string): void };

export class MediaSockets {
  constructor(private readonly deps: MediaSocketDeps) {}

  /** GET /api/media/twilio: Twilio Media Streams; the token comes in `start.customParameters`. */
  carryTwilio(socket: MediaSocket, address: string, log: Log): void {
    const { deps } = this;
    // Before its token is accepted a socket keeps admission's rules; too many waiting: refused.
    const pending = deps.admission.admit(socket, address);
    if (!pending) return;
    const transport = new TwilioTransport(pending.socket);
    pending.presentedWhen(() => transport.hasStarted);
    const refuse = (why: string) => pending.refuse(1008, why);
    const callOf = async (sessionId: string) => (await deps.store.findSession(sessionId))?.provider_call_id ?? null;
    transport.started
      .then(
        async (start) => {
          const token = start.customParameters.token;
          if (!token) return refuse('no token');
          let accepted;
          try {
            accepted = await deps.tokens.accept(token, 'twilio', { callSid: start.callSid, callOf });
          } catch (err) {
            return refuse(err instanceof AppError ? err.message : 'token refused');
          }
          // Refused meanwhile (its deadline passed, it broke a rule, it closed): no call is touched.
          if (!pending.accepted()) return;
          const control = deps.controlFor(start.callSid);
          await deps.runner.run({
            sessionId: accepted.sessionId,
            userId: accepted.userId,
            transport,
            callSid: start.callSid,
            control: {
              hangUp: async () => {
                if (control) await control.endCall(start.callSid);
                transport.close('hang_up');
              },
              transfer: async (leg) => {
                await redirectToLeg(control, start.callSid, leg);
                await deps.legs?.markDialled(accepted.sessionId);
                transport.close('transferred');
              },
            },
          });
        },
        // Closed or shut out before its start: nothing to log (strangers make many of these).
        () => refuse('no start'),
      )
      .catch((err: unknown) => {
        log.warn({ err }, 'media stream failed');
        refuse('stream failed');
      });
  }

  /** GET /api/media/web: a browser's call; the token is in the URL. */
  carryWeb(socket: MediaSocket, address: string, token: string | undefined, log: Log): void {
    const { deps } = this;
    // A browser may send audio at once, in messages up to the route's maxPayload: its transport paces them.
    const pending = deps.admission.admit(socket, address, { maxMessageBytes: MEDIA_MAX_PAYLOAD_BYTES });
    if (!pending) return;
    const transport = new WebTransport(pending.socket);
    const refuse = (why: string) => pending.refuse(1008, why);
    if (!token) return refuse('no token');
    pending.presented();
    deps.tokens
      .accept(token, 'web')
      .then(
        async (accepted) => {
          // Refused meanwhile (its deadline passed, it broke a rule, it closed): the call is left to its own timer.
          if (!pending.accepted()) return;
          deps.webConnected(accepted.sessionId);
          await deps.runner.run({
            sessionId: accepted.sessionId,
            userId: accepted.userId,
            transport,
            // A browser call has no carrier: the session closes the socket with its reason (an `ended` message first).
            control: { hangUp: async () => {}, transfer: async () => {} },
          });
        },
        (err: unknown) => refuse(err instanceof AppError ? err.message : 'token refused'),
      )
      .catch((err: unknown) => {
        log.warn({ err }, 'web call ended with an error');
        transport.close('provider_error');
      });
  }
}
