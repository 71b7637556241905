// The campaign's pacing (docs/decisions/campaigns.md "Pacing is a slot
// pointer"): `campaigns.next_dial_at` is the time of the next slot, shared by
// every instance. A round at `now` may take every slot due since
// max(pointer, now − burstMs): a round that comes late (a slow database, a
// busy process, the other instance holding the row) catches up at most
// burstMs of pacing at once, and slots older than that are lost, not made up.
// Each dial taken moves the pointer on by 60,000 / callsPerMinute ms, rounded
// up to the millisecond (the column is whole ms), so the dials from the start
// never outrun the pacing: by `t` at most (t − start) / interval + 1.

export interface PacingSlots {
  /** Slots due now (0: the next one is later). */
  due: number;
  /** The pointer once `taken` of them were dialled. */
  after(taken: number): number;
}

export function pacingSlots(pointer: number, now: number, callsPerMinute: number, burstMs: number): PacingSlots {
  const interval = 60_000 / callsPerMinute;
  const base = Math.max(pointer, now - burstMs);
  const due = base <= now ? Math.floor((now - base) / interval) + 1 : 0;
  return { due, after: (taken) => Math.ceil(base + taken * interval) };
}
