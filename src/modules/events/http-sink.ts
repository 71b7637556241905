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
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { StreamSink } from './connection.js';
import { Frames } from './stream-event.js';

export function responseSink(res: ServerResponse): StreamSink {
  const closeListeners: Array<() => void> = [];
  res.on('close', () => {
    for (const listener of closeListeners.splice(0)) listener();
  });
  const internal = res as unknown as { chunkedEncoding?: boolean; outputSize?: number };
  const socket: Socket | null = res.headersSent && res.socket && (internal.outputSize ?? 0) === 0 ? res.socket : null;
  const chunked = internal.chunkedEncoding === true;
  // What drains: the socket when we write to it, else the response.
  const out = socket ?? res;
  return {
    write(data) {
      if (res.destroyed) return false;
      const frames = typeof data === 'string' ? Frames.text(data) : data;
      if (!socket) return res.write(frames.raw);
      return socket.write(chunked ? frames.chunked : frames.raw);
    },
    get bufferedBytes() {
      return socket ? socket.writableLength : res.writableLength;
    },
    get closed() {
      return res.destroyed || res.writableEnded;
    },
    waitForDrain(timeoutMs) {
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
    },
    end(graceful) {
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
    },
    onClose(listener) {
      if (res.destroyed) listener();
      else closeListeners.push(listener);
    },
    onDrain(listener) {
      out.on('drain', listener);
    },
  };
}
