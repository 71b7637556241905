// Adapts a node:http response to the StreamSink an event stream writes to.
import type { ServerResponse } from 'node:http';
import type { StreamSink } from './connection.js';

export function responseSink(res: ServerResponse): StreamSink {
  const closeListeners: Array<() => void> = [];
  res.on('close', () => {
    for (const listener of closeListeners.splice(0)) listener();
  });
  return {
    write: (chunk) => (res.destroyed ? false : res.write(chunk)),
    get bufferedBytes() {
      return res.writableLength;
    },
    get closed() {
      return res.destroyed || res.writableEnded;
    },
    waitForDrain(timeoutMs) {
      if (res.destroyed) return Promise.resolve(false);
      // 'drain' follows only a write that returned false; otherwise the queue is already moving.
      if (!res.writableNeedDrain) return Promise.resolve(true);
      return new Promise((resolve) => {
        const done = (drained: boolean) => {
          clearTimeout(timer);
          res.off('drain', onDrain);
          res.off('close', onClose);
          resolve(drained);
        };
        const onDrain = () => done(true);
        const onClose = () => done(false);
        const timer = setTimeout(() => done(false), timeoutMs);
        res.once('drain', onDrain);
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
  };
}
