import { describe, expect, it } from 'vitest';
import { endpointDelay, TurnTaking, type TurnDecision, type TurnEvent } from '../../../src/modules/voice/turns.js';

type Row = [number, string, ...unknown[]];

/**
 * Runs an event table: [atMs, kind, args…]; ticks every 50 ms between events; returns decisions with times
 * (turn_likely, the hint for a model asked ahead, only with `withLikely`).
 */
function run(rows: Row[], settings = {}, until?: number, withLikely = false): Array<[number, string, unknown?]> {
  const turns = new TurnTaking(0, settings);
  const out: Array<[number, string, unknown?]> = [];
  let t = 0;
  const row = (at: number, d: TurnDecision): [number, string, unknown?] => {
    const extra =
      d.type === 'end_of_turn'
        ? d.text
        : d.type === 'turn_likely'
          ? d.modelText
          : d.type === 'reprompt'
            ? d.count
            : d.type === 'end'
              ? d.reason
              : undefined;
    return extra === undefined ? [at, d.type] : [at, d.type, extra];
  };
  const hint = (d: TurnDecision) => d.type === 'turn_likely';
  const take = (ds: TurnDecision[]) => {
    for (const d of ds) if (withLikely || !hint(d)) out.push(row('atMs' in d ? d.atMs : t, d));
  };
  const toEvent = ([at, kind, a, _b]: Row): TurnEvent => {
    switch (kind) {
      case 'start':
        return { type: 'speech_start', atMs: at };
      case 'end':
        return { type: 'speech_end', atMs: at };
      case 'final':
        return { type: 'recognition', text: a as string, final: true, atMs: at };
      case 'interim':
        return { type: 'recognition', text: a as string, final: false, atMs: at };
      case 'agent':
        return { type: 'agent', state: a as 'replying' | 'idle', atMs: at };
      default:
        throw new Error(kind);
    }
  };
  const last = until ?? (rows.at(-1)?.[0] ?? 0) + 4000;
  let i = 0;
  for (t = 0; t <= last; t += 10) {
    while (i < rows.length && rows[i]![0] <= t) {
      const next = rows[i++]!;
      for (const d of turns.update(toEvent(next))) if (withLikely || !hint(d)) out.push(row(next[0], d));
    }
    if (t % 50 === 0) take(turns.update({ type: 'tick', atMs: t }));
  }
  return out;
}

describe('endpointDelay', () => {
  it.each([
    ['What are your opening hours?', true, 500],
    ['I would like to book a meeting.', true, 500],
    ['I would like to book a meeting for', true, 3000],
    ['hello who is this', true, 1000],
    ['hello who is this', false, 3000],
  ])('%s (final %s) → %i ms', (text, final, ms) => {
    expect(endpointDelay(text, final, { endpointMinMs: 500, endpointMaxMs: 3000 })).toBe(ms);
  });
});

describe('TurnTaking', () => {
  it('ends a turn 500 ms after speech when the final ends a sentence', () => {
    expect(
      run(
        [
          [100, 'start'],
          [1000, 'end'],
          [1100, 'final', 'What are your opening hours?'],
        ],
        {},
        3000,
      ).filter((d) => d[1] === 'end_of_turn'),
    ).toEqual([[1500, 'end_of_turn', 'What are your opening hours?']]);
  });

  it('waits 1000 ms for a final without punctuation and 3000 ms after a word that leads on', () => {
    expect(
      run(
        [
          [100, 'start'],
          [1000, 'end'],
          [1050, 'final', 'hello who is this'],
        ],
        {},
        5000,
      ).filter((d) => d[1] === 'end_of_turn'),
    ).toEqual([[2000, 'end_of_turn', 'hello who is this']]);
    expect(
      run(
        [
          [100, 'start'],
          [1000, 'end'],
          [1050, 'final', 'I want to book a meeting for'],
        ],
        {},
        5000,
      ).filter((d) => d[1] === 'end_of_turn'),
    ).toEqual([[4000, 'end_of_turn', 'I want to book a meeting for']]);
  });

  it('keeps one turn across a pause when the caller goes on before the endpoint', () => {
    const d = run(
      [
        [100, 'start'],
        [800, 'end'],
        [850, 'final', 'I would like to book'],
        [1500, 'start'],
        [2200, 'end'],
        [2250, 'final', 'a meeting next Tuesday.'],
      ],
      {},
      4000,
    );
    expect(d.filter((x) => x[1] === 'end_of_turn')).toEqual([
      [2700, 'end_of_turn', 'I would like to book a meeting next Tuesday.'],
    ]);
  });

  it('hints a likely end once every word is final, before the endpoint, once per text', () => {
    expect(
      run(
        [
          [100, 'start'],
          [1000, 'end'],
          [1100, 'final', 'What are your opening hours?'],
        ],
        {},
        3000,
        true,
      ),
    ).toEqual([
      [1100, 'turn_likely', 'What are your opening hours?'],
      [1500, 'end_of_turn', 'What are your opening hours?'],
    ]);
  });

  it('hints the longer text when the caller goes on', () => {
    expect(
      run(
        [
          [100, 'start'],
          [800, 'end'],
          [850, 'final', 'I would like to book'],
          [1500, 'start'],
          [2200, 'end'],
          [2250, 'final', 'a meeting next Tuesday.'],
        ],
        {},
        4000,
        true,
      ),
    ).toEqual([
      [850, 'turn_likely', 'I would like to book'],
      [2250, 'turn_likely', 'I would like to book a meeting next Tuesday.'],
      [2700, 'end_of_turn', 'I would like to book a meeting next Tuesday.'],
    ]);
  });

  it('gives no hint on interim words, while the agent replies, or while an utterance is transcribed', () => {
    const hints = (rows: Row[], settings = {}) => run(rows, settings, 6000, true).filter((d) => d[1] === 'turn_likely');
    expect(
      hints([
        [100, 'start'],
        [900, 'end'],
        [950, 'interim', 'maybe'],
      ]),
    ).toEqual([]);
    expect(
      hints([
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [1100, 'end'],
        [1200, 'final', 'Mm-hm.'],
      ]),
    ).toEqual([]);
    // A comma pause cut the line in two: the first answer is no hint while the second is awaited.
    expect(
      hints(
        [
          [100, 'start'],
          [600, 'end'],
          [700, 'start'],
          [1400, 'end'],
          [1500, 'final', 'Hello,'],
          [1700, 'final', 'who is this?'],
        ],
        { finalPerUtterance: true },
      ),
    ).toEqual([[1700, 'turn_likely', 'Hello, who is this?']]);
  });

  it('ends on interim words alone after the maximum, and drops speech with no words', () => {
    expect(
      run(
        [
          [100, 'start'],
          [900, 'end'],
          [950, 'interim', 'maybe'],
        ],
        {},
        5000,
      ).filter((d) => d[1] === 'end_of_turn'),
    ).toEqual([[3900, 'end_of_turn', 'maybe']]);
    expect(
      run(
        [
          [100, 'start'],
          [900, 'end'],
        ],
        {},
        5000,
      ),
    ).toEqual([]);
  });

  it('waits for a per-utterance recogniser before deciding', () => {
    const d = run(
      [
        [100, 'start'],
        [900, 'end'],
        [4500, 'final', 'Goodbye.'],
      ],
      { finalPerUtterance: true },
      6000,
    );
    expect(d).toEqual([[4500, 'end_of_turn', 'Goodbye.']]);
  });

  it('barges in after 300 ms of caller speech while the agent replies', () => {
    const d = run(
      [
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [1600, 'final', 'Wait.'],
        [1700, 'end'],
      ],
      {},
      3000,
    );
    expect(d).toEqual([
      [1300, 'barge_in'],
      [2200, 'end_of_turn', 'Wait.'],
    ]);
  });

  it('a short sound over the agent is no barge-in and no turn', () => {
    const d = run(
      [
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [1200, 'end'],
        [1250, 'final', 'mm-hm.'],
        [2000, 'agent', 'idle'],
      ],
      {},
      5000,
    );
    expect(d).toEqual([]);
  });

  it('no words within 2 s of a barge-in is a false interruption', () => {
    const d = run(
      [
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [1500, 'end'],
      ],
      {},
      4000,
    );
    expect(d).toEqual([
      [1300, 'barge_in'],
      [3300, 'false_interruption'],
    ]);
  });

  it('a per-utterance recogniser: a long sentence over the agent is a barge-in and a turn, not a false interruption', () => {
    const d = run(
      [
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [3800, 'end'],
        [4900, 'final', 'I would like to book a meeting.'],
      ],
      { finalPerUtterance: true },
      8000,
    );
    expect(d).toEqual([
      [1300, 'barge_in'],
      [4900, 'end_of_turn', 'I would like to book a meeting.'],
    ]);
    // Nothing recognised once transcribed: a false interruption after all.
    const none = run(
      [
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [3800, 'end'],
        [4200, 'final', ''],
      ],
      { finalPerUtterance: true },
      8000,
    );
    expect(none).toEqual([
      [1300, 'barge_in'],
      [4200, 'false_interruption'],
    ]);
  });

  it('reprompts 8 s after the agent went quiet, twice, then ends for silence', () => {
    const d = run(
      [
        [0, 'agent', 'replying'],
        [2000, 'agent', 'idle'],
        [10_500, 'agent', 'replying'],
        [11_000, 'agent', 'idle'],
        [19_500, 'agent', 'replying'],
        [20_000, 'agent', 'idle'],
      ],
      {},
      30_000,
    );
    expect(d).toEqual([
      [10_000, 'reprompt', 1],
      [19_000, 'reprompt', 2],
      [28_000, 'end', 'silence'],
    ]);
  });

  it('caller words reset the reprompt count', () => {
    const turns = new TurnTaking(0);
    expect(turns.update({ type: 'tick', atMs: 8000 })).toEqual([{ type: 'reprompt', count: 1, atMs: 8000 }]);
    turns.update({ type: 'speech_start', atMs: 9000 });
    turns.update({ type: 'speech_end', atMs: 9500 });
    turns.update({ type: 'recognition', text: 'Yes.', final: true, atMs: 9600 });
    expect(turns.update({ type: 'tick', atMs: 10_000 })).toMatchObject([{ type: 'end_of_turn', text: 'Yes.' }]);
    expect(turns.repromptCount).toBe(0);
  });

  // flite's kal voice says "Hello, who is this?" as speech 300–760 ms and 1020–1560 ms (Silero through the phone
  // path): the VAD cuts at the comma, so a per-utterance recogniser answers each half on its own. Under load the
  // first answer came back after the second half was cut; the turn ended on it (the recogniser was thought done),
  // and the second answer started a second turn.
  it('a comma pause stays one turn: a per-utterance recogniser is waited for on every utterance of the turn', () => {
    const comma: Row[] = [
      [300, 'start'],
      [760, 'end'],
      [1020, 'start'],
      [1560, 'end'],
      [1900, 'final', 'Hello.'],
      [2300, 'final', 'Who is this?'],
    ];
    expect(run(comma, { finalPerUtterance: true }, 6000)).toEqual([[2300, 'end_of_turn', 'Hello. Who is this?']]);
    // Answered in the pause, the first half does not end the turn either: the caller speaks again within 500 ms.
    const quick: Row[] = [
      [300, 'start'],
      [760, 'end'],
      [900, 'final', 'Hello.'],
      [1020, 'start'],
      [1560, 'end'],
      [1700, 'final', 'Who is this?'],
    ];
    expect(run(quick, { finalPerUtterance: true }, 6000)).toEqual([[2100, 'end_of_turn', 'Hello. Who is this?']]);
    // A recogniser that never answers the second half: the turn is given up on after 10 s with what it has.
    const lost: Row[] = [
      [300, 'start'],
      [760, 'end'],
      [1020, 'start'],
      [1560, 'end'],
      [1900, 'final', 'Hello.'],
    ];
    expect(run(lost, { finalPerUtterance: true }, 14_000).filter((d) => d[1] === 'end_of_turn')).toEqual([
      [11_600, 'end_of_turn', 'Hello.'],
    ]);
  });

  it("a per-utterance recogniser's late answer for a sound dropped over the agent does not join the next turn", () => {
    const d = run(
      [
        [0, 'agent', 'replying'],
        [1000, 'start'],
        [1200, 'end'],
        [1300, 'agent', 'idle'],
        [1500, 'start'],
        [2300, 'end'],
        [2400, 'final', 'mm-hm'],
        [2600, 'final', 'What time is it?'],
      ],
      { finalPerUtterance: true },
      6000,
    );
    expect(d).toEqual([[2800, 'end_of_turn', 'What time is it?']]);
  });

  it('an unclear final is in the line with its words marked, and the model gets "(unclear)" instead', () => {
    const turns = new TurnTaking(0);
    turns.update({ type: 'speech_start', atMs: 1000 });
    turns.update({ type: 'recognition', text: 'bye', final: true, unclear: true, atMs: 1400 });
    turns.update({ type: 'recognition', text: 'no', final: true, unclear: true, atMs: 1450 });
    turns.update({ type: 'speech_end', atMs: 1500 });
    expect(turns.update({ type: 'tick', atMs: 2500 })).toMatchObject([
      { type: 'end_of_turn', text: 'bye (unclear) no (unclear)', modelText: '(unclear)' },
    ]);
    turns.update({ type: 'speech_start', atMs: 3000 });
    turns.update({ type: 'recognition', text: 'opening hours', final: true, atMs: 3400 });
    turns.update({ type: 'recognition', text: 'bye', final: true, unclear: true, atMs: 3450 });
    turns.update({ type: 'speech_end', atMs: 3500 });
    expect(turns.update({ type: 'tick', atMs: 4500 })).toMatchObject([
      { type: 'end_of_turn', text: 'opening hours bye (unclear)', modelText: 'opening hours (unclear)' },
    ]);
  });

  it('ends at the maximum duration, once', () => {
    const turns = new TurnTaking(0, { maxDurationMs: 60_000 });
    turns.update({ type: 'agent', state: 'replying', atMs: 0 });
    expect(turns.update({ type: 'tick', atMs: 59_999 })).toEqual([]);
    expect(turns.update({ type: 'tick', atMs: 60_000 })).toEqual([
      { type: 'end', reason: 'max_duration', atMs: 60_000 },
    ]);
    expect(turns.update({ type: 'tick', atMs: 60_050 })).toEqual([]);
  });
});
