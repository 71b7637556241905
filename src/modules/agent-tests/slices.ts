// Turns of the event loop for agent tests. SQLite and the sandbox dialogue
// engine answer synchronously, so a test's turn runs as one chain of
// microtasks; tests that wait on setImmediate together would all run in the
// same check phase, one after another, with no I/O between them (8 booking
// turns of 30 ms: another user's request waits 240 ms). nextSlice() hands
// out one slice per turn of the event loop: the waiter released runs, and
// the next is released only on the next turn, after the poll phase has served
// the sockets. A turn that waits on the network (a real model) gives its
// slice back at its first await, so tests still overlap their waits.
const waiting: Array<() => void> = [];
let scheduled = false;

function release() {
  waiting.shift()?.();
  if (waiting.length) setImmediate(release);
  else scheduled = false;
}

/** Resolves on a turn of the event loop of its own. */
export function nextSlice(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(release);
    }
  });
}
