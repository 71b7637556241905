// Who may hold a media socket before its token is accepted (issue 46: two
// strangers' sockets took another user's p50 from 8 ms to 931 ms). The media
// routes (/api/media/twilio, /api/media/web) are open to anyone, so until a
// socket's token is accepted it gets only what a carrier or a browser needs:
// a short deadline, small messages, no more than a couple before it has
// presented its token, and a place among a bounded number of such sockets
// per remote address and in all. A socket that breaks a rule is closed at
// once and cut off shortly after if it does not finish the close. The rules
// live here, on an injected clock; the routes only wire them.
import type { Timer, TimerClock } from '../../lib/clock.js';
import { CLOSE_POLICY, CLOSE_TOO_BIG, type SocketLike } from '../voice/transport.js';

/**
 * The WebSocket `maxPayload` of the media routes (app.ts; ws closes larger
 * messages with 1009). Twilio's messages are under 1 KB; a browser sends
 * 20 ms frames of 640 bytes (16 kHz PCM16), and 64 KB is two seconds of
 * them in one message, the burst its audio allowance takes at once.
 */
export const MEDIA_MAX_PAYLOAD_BYTES = 64 * 1024;

/** Close code for a socket refused because too many wait already (RFC 6455 "Try Again Later"). */
export const CLOSE_TRY_LATER = 1013;

export interface MediaAdmissionLimits {
  /** MEDIA_UNAUTHENTICATED_PER_ADDRESS: sockets of one remote address whose token is not accepted yet. */
  perAddress: number;
  /** MEDIA_UNAUTHENTICATED_MAX: such sockets in all, on this instance. */
  total: number;
  /** From open to an accepted token. */
  deadlineMs: number;
  /**
   * Largest message before the token is accepted: 4 KB, what Twilio's
   * `connected` and `start` need; a route whose token is in its URL (the
   * browser's) and whose client may send audio at once passes its own.
   */
  maxMessageBytes: number;
  /** Messages before the token is presented (Twilio: `connected`, `start`). */
  maxMessagesBeforeToken: number;
  /** A socket closed for a violation that has not finished the close handshake by then (wall time) is cut off. */
  closeGraceMs: number;
}

export const DEFAULT_MEDIA_ADMISSION: MediaAdmissionLimits = {
  perAddress: 8,
  total: 200,
  deadlineMs: 5000,
  maxMessageBytes: 4096,
  maxMessagesBeforeToken: 2,
  closeGraceMs: 1000,
};

/** The part of a `ws` WebSocket admission handles. */
export interface MediaSocket extends SocketLike {
  terminate(): void;
  pause?(): void;
}

function byteSize(data: unknown): number {
  if (typeof data === 'string') return Buffer.byteLength(data);
  if (Array.isArray(data)) return data.reduce((n: number, part: Buffer) => n + part.length, 0);
  if (data instanceof ArrayBuffer) return data.byteLength;
  return (data as Buffer).length ?? 0;
}

/**
 * Closes `socket` for what it did, reads nothing more from it, and cuts it
 * off if it has not closed after `graceMs` of wall time (a peer that never
 * answers the close would otherwise hold its TCP connection for ws's 30 s).
 */
function shut(socket: MediaSocket, graceMs: number, code: number, reason: string): void {
  socket.close(code, reason.slice(0, 120));
  socket.pause?.();
  const cut = setTimeout(() => socket.terminate(), graceMs);
  cut.unref();
  socket.on('close', () => clearTimeout(cut));
}

export class MediaAdmission {
  private readonly byAddress = new Map<string, number>();
  private count = 0;
  /** Sockets refused because too many waited (tests and metrics). */
  refused = 0;

  constructor(
    private readonly limits: MediaAdmissionLimits,
    private readonly clock: TimerClock,
  ) {}

  /** Sockets whose token is not accepted yet (including those closing for a violation until they are gone). */
  get waiting(): number {
    return this.count;
  }

  waitingFrom(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }

  /**
   * A socket just opened from `address`: its pass while its token is checked,
   * or null when too many wait already (the socket is then closed with 1013).
   */
  admit(
    socket: MediaSocket,
    address: string,
    rules: Partial<Pick<MediaAdmissionLimits, 'maxMessageBytes'>> = {},
  ): PendingMedia | null {
    const mine = this.byAddress.get(address) ?? 0;
    if (mine >= this.limits.perAddress || this.count >= this.limits.total) {
      this.refused++;
      shut(socket, this.limits.closeGraceMs, CLOSE_TRY_LATER, 'too many media sockets waiting for their token');
      return null;
    }
    this.byAddress.set(address, mine + 1);
    this.count++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.count--;
      const left = (this.byAddress.get(address) ?? 1) - 1;
      if (left > 0) this.byAddress.set(address, left);
      else this.byAddress.delete(address);
    };
    return new PendingMedia(socket, { ...this.limits, ...rules }, this.clock, release);
  }
}

/**
 * One socket while its token is checked. `socket` is what the transport
 * reads: the same socket, its messages let through only while they keep the
 * rules. `accepted()` ends the rules (the transport's own limits go on).
 */
export class PendingMedia {
  readonly socket: SocketLike;
  private state: 'waiting' | 'presented' | 'accepted' | 'refused' = 'waiting';
  private messages = 0;
  private presentedCheck: (() => boolean) | null = null;
  private readonly deadline: Timer;
  private readonly listeners: Array<(data: unknown, isBinary?: boolean) => void> = [];

  constructor(
    private readonly raw: MediaSocket,
    private readonly limits: MediaAdmissionLimits,
    readonly clock: TimerClock,
    private readonly release: () => void,
  ) {
    this.deadline = clock.setTimeout(() => this.refuse(CLOSE_POLICY, 'no accepted token in time'), limits.deadlineMs);
    raw.on('message', (data: unknown, isBinary?: boolean) => this.onMessage(data, isBinary));
    // The place is held until the socket is gone, so sockets closing for a violation still count.
    raw.on('close', () => {
      this.deadline.cancel();
      if (this.state !== 'accepted') this.release();
    });
    const pass = this;
    this.socket = {
      send: (data) => raw.send(data),
      close: (code, reason) =>
        code === undefined || code === 1000 ? raw.close(code, reason) : pass.refuse(code, reason ?? ''),
      on(event: 'message' | 'close', listener: (...args: any[]) => void) {
        if (event === 'message') pass.listeners.push(listener);
        else raw.on('close', listener);
        return this;
      },
    };
  }

  get refused(): boolean {
    return this.state === 'refused';
  }

  /** The token has arrived (a browser: in the URL): from now on messages are not counted, only sized. */
  presented(): void {
    if (this.state === 'waiting') this.state = 'presented';
  }

  /**
   * The token arrives in a message (Twilio: `start`): `check` says, as each
   * message comes, whether the transport has read it. (The route hears of it
   * a microtask later, when messages read in the same turn are counted already.)
   */
  presentedWhen(check: () => boolean): void {
    this.presentedCheck = check;
  }

  /** The token was accepted: the socket leaves admission. False when it had been refused meanwhile (deadline, violation, closed). */
  accepted(): boolean {
    if (this.state === 'refused') return false;
    this.state = 'accepted';
    this.deadline.cancel();
    this.release();
    return true;
  }

  /** Closes the socket with `code` (a refused token: 1008); nothing more it sends is read. */
  refuse(code: number, reason: string): void {
    if (this.state === 'refused') return;
    this.state = 'refused';
    this.deadline.cancel();
    shut(this.raw, this.limits.closeGraceMs, code, reason);
  }

  private onMessage(data: unknown, isBinary?: boolean) {
    if (this.state === 'refused') return;
    if (this.state !== 'accepted') {
      if (byteSize(data) > this.limits.maxMessageBytes)
        return this.refuse(CLOSE_TOO_BIG, 'message too big before the token was accepted');
      if (this.state === 'waiting' && this.presentedCheck?.()) this.state = 'presented';
      if (this.state === 'waiting' && ++this.messages > this.limits.maxMessagesBeforeToken)
        return this.refuse(CLOSE_POLICY, 'no token in the first messages');
    }
    for (const listener of this.listeners) listener(data, isBinary);
  }
}

/**
 * @fastify/websocket's error handler (app.ts; the media routes are its only
 * WebSocket routes). A peer's protocol error (a message over
 * MEDIA_MAX_PAYLOAD_BYTES, bad UTF-8, a bad frame) is the peer's doing: ws
 * is closing the socket with the matching code already, so it is logged at
 * debug and cut off after the close grace rather than at once (the close
 * frame still reaches the peer). Anything else as the plugin's default.
 */
export function mediaSocketErrorHandler(
  error: Error & { code?: unknown },
  socket: MediaSocket,
  request: { log: { debug(obj: unknown, msg: string): void; error(obj: unknown): void } },
): void {
  if (typeof error.code === 'string' && error.code.startsWith('WS_ERR_')) {
    request.log.debug({ err: error }, 'media socket closed for a protocol error');
    const cut = setTimeout(() => socket.terminate(), DEFAULT_MEDIA_ADMISSION.closeGraceMs);
    cut.unref();
    socket.on('close', () => clearTimeout(cut));
    return;
  }
  request.log.error(error);
  socket.terminate();
}
