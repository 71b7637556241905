// Adapts a node:http response to the StreamSink an event stream writes to.
//
// Once the headers are out and the response owns its socket (always, unless
// an earlier pipelined response still holds it), frames go straight to the
// socket: already framed as an HTTP/1.1 chunk when the response is chunked
// (raw otherwise), as one Buffer shared by every stream that sends the same
// frames. That is one socket write per flush instead of ServerResponse's four
// (size line, CRLF, data, CRLF) per event, and it keeps order with the
// response's own writes (its final chunk on end()) because both go through the
// same socket in sequence.
//
// A class, not an object literal of closures and getters: V8 gives every such
// literal with accessors a map of its own, so a feed's flush over 5,000 sinks
// read `write` and `bufferedBytes` through the generic (megamorphic) load path,
// ~14% of the server's CPU in that fan-out (bench/ANALYSIS.md).
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { StreamSink } from './connection.js';
import { Frames } from './stream-event.js';

class ResponseSink implements StreamSink {
  private readonly closeListeners: Array<() => void> = [];
  /** The socket when frames go straight to it, else null (they go through the response). */
  private readonly socket: Socket | null;
  private readonly chunked: boolean;
  /** What drains: the socket when we write to it, else the response. */
  private readonly out: Socket | ServerResponse;

  constructor(private readonly res: ServerResponse) {
    res.on('close', () => {
      for (const listener of this.closeListeners.splice(0)) listener();
    });
    const internal = res as unknown as { chunkedEncoding?: boolean; outputSize?: number };
    this.socket = res.headersSent && res.socket && (internal.outputSize ?? 0) === 0 ? res.socket : null;
    this.chunked = internal.chunkedEncoding === true;
    this.out = this.socket ?? res;
  }

  write(data: Frames | string): boolean {
    if (this.res.destroyed) return false;
    const frames = typeof data === 'string' ? Frames.text(data) : data;
    if (!this.socket) return this.res.write(frames.raw);
    return this.socket.write(this.chunked ? frames.chunked : frames.raw);
  }

  get bufferedBytes(): number {
    return this.out.writableLength;
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }

  waitForDrain(timeoutMs: number): Promise<boolean> {
    const { res, out } = this;
    if (res.destroyed) return Promise.resolve(false);
    // 'drain' follows only a write that returned false; otherwise the queue is already moving.
    if (!out.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        out.off('drain', onDrain);
        res.off('close', onClose);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      out.once('drain', onDrain);
      res.once('close', onClose);
    });
  }

  end(graceful: boolean): void {
    const res = this.res;
    if (res.destroyed) return;
    if (!graceful) {
      res.destroy();
      return;
    }
    res.end();
    // A client that stopped reading would keep the socket (and shutdown) waiting for the flush.
    const timer = setTimeout(() => res.destroy(), 2000);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
  }

  onClose(listener: () => void): void {
    if (this.res.destroyed) listener();
    else this.closeListeners.push(listener);
  }

  onDrain(listener: () => void): void {
    this.out.on('drain', listener);
  }
}

export function responseSink(res: ServerResponse): StreamSink {
  return new ResponseSink(res);
}
