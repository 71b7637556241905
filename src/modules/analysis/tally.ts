// What a call counts as in analytics, as bits of one integer on its row
// (`tally`, written with its analysis): the analytics route groups by it and
// decodes each group, instead of testing every row against every count.
export const TALLY = {
  answered: 1,
  completed: 2,
  voicemail: 4,
  transferred: 8,
  failed: 16,
  success: 32,
  /** Its analysis decided success (true or false). */
  judged: 64,
  ended: 128,
} as const;

export function tallyOf(call: {
  status: string;
  outcome: string | null;
  answeredAt: number | null;
  ended: boolean;
  success: boolean | null;
}): number {
  let bits = 0;
  if (call.answeredAt !== null) bits |= TALLY.answered;
  if ((call.outcome ?? call.status) === 'completed') bits |= TALLY.completed;
  if (call.outcome === 'voicemail') bits |= TALLY.voicemail;
  if (call.outcome === 'transferred') bits |= TALLY.transferred;
  if (call.status === 'failed') bits |= TALLY.failed;
  if (call.success !== null) bits |= TALLY.judged;
  if (call.success === true) bits |= TALLY.success;
  if (call.ended) bits |= TALLY.ended;
  return bits;
}
