// Time-critical work that must not wait for a long synchronous run to end.
// SQLite answers synchronously, so a group-commit batch of large writes (the
// calls that end together, each with its recording) runs as one chain of
// microtasks; timers wait for the whole chain. Yielding the event loop inside
// it would let the frames out, but it delays the batch's commit behind
// whatever else the loop holds (the calls bench's call_status events: p99 66 →
// 139 ms). Instead such runs call `runUrgentWork()` between their units: the
// voice agent's pacer registers its poll while it has frames to send, and a
// poll sends only frames already due (a clock read when none is).
const polls = new Set<() => void>();

/** Registers a poll run at every urgent-work point; returns its removal. Registering twice is once. */
export function addUrgentPoll(poll: () => void): () => void {
  polls.add(poll);
  return () => polls.delete(poll);
}

/** A point inside a long synchronous run where time-critical work gets to run. */
export function runUrgentWork(): void {
  for (const poll of polls) poll();
}
