// The pathway walker on an injected clock: node effects, edges of every
// kind, webhook results, chains of non-speaking nodes, the move limit and
// the record's snapshot.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import type { PathwayDocument } from '../../../src/modules/pathways/schemas.js';
import { validatePathway } from '../../../src/modules/pathways/validate.js';
import { MAX_MOVES, PathwayWalker, type PathwayWalkerOptions } from '../../../src/modules/pathways/walker.js';
import { clinicPathway, menuPathway } from './fixtures.js';

const START = Date.parse('2026-11-23T10:00:00Z');

function walker(document: PathwayDocument, options: Partial<PathwayWalkerOptions> = {}) {
  const clock = new ManualClock(START);
  const w = new PathwayWalker({
    document,
    clock,
    contact: { name: 'Ada', phone: '+14155550100', fields: { note: 'says "hi"' } },
    ...options,
  });
  return { w, clock };
}

describe('the fixtures', () => {
  it('are valid pathways', () => {
    expect(validatePathway(clinicPathway()).errors).toEqual([]);
    expect(validatePathway(menuPathway()).errors).toEqual([]);
  });
});

describe('PathwayWalker: conversation nodes and the model tools', () => {
  it('enters the start node: its say filled, the path started at call time zero', () => {
    const { w } = walker(clinicPathway());
    const step = w.start();
    expect(step.effects).toEqual([
      { kind: 'conversation', node: 'greet', say: 'Hello Ada, this is Bright Dental. Are you an existing patient?' },
    ]);
    expect(step.moves).toEqual([{ node: 'greet', atMs: 0 }]);
    expect(w.state).toBe('conversation');
    expect(w.moves).toBe(0);
    expect(() => w.start()).toThrow(/already started/);
  });

  it('refuses the tools before the start and after the end', () => {
    const { w } = walker(clinicPathway());
    expect(w.applyChoosePath({ to: 'qualify' }).result).toEqual({ error: 'the pathway has not started' });
    w.start();
    w.applyChoosePath({ to: 'optout' });
    expect(w.state).toBe('finished');
    expect(w.applySetVariables({ is_patient: true }).result).toEqual({ error: 'the pathway has ended' });
  });

  it('set_variables finishes a node once its extract variables have values, then takes the fallback', () => {
    const { w, clock } = walker(clinicPathway());
    w.start();
    clock.advance(4200);
    const applied = w.applySetVariables({ is_patient: true });
    expect(applied.result).toEqual({ ok: true, set: { is_patient: true }, node: 'qualify' });
    expect(applied.step.moves).toEqual([{ node: 'qualify', atMs: 4200, edge: '/edges/0', from: 'greet' }]);
    expect(applied.step.effects).toEqual([
      { kind: 'conversation', node: 'qualify', say: 'What can we help with: a checkup, a cleaning, or pain?' },
    ]);
    // Half the variables: the node waits for the rest.
    const half = w.applySetVariables({ reason: 'Checkup' });
    expect(half.result).toEqual({ ok: true, set: { reason: 'checkup' }, node: 'qualify' });
    expect(half.step.moves).toEqual([]);
    expect(w.missingVariables()).toEqual(['preferred_date']);
  });

  it('an if edge is taken as soon as its condition holds, before the node has finished', () => {
    const { w } = walker(clinicPathway());
    w.start();
    w.applySetVariables({ is_patient: false });
    const step = w.applySetVariables({ reason: 'pain' }).step;
    expect(step.effects).toEqual([
      {
        kind: 'transfer',
        node: 'urgent',
        humanAgentId: 'ha_urgent',
        say: 'Let me put you through to our urgent line.',
      },
    ]);
    expect(step.moves.at(-1)).toMatchObject({ node: 'urgent', edge: '/edges/1', from: 'qualify' });
    expect(w.state).toBe('finished');
  });

  it('choose_path takes a when edge, a global edge or the fallback by target id', () => {
    const first = walker(clinicPathway()).w;
    first.start();
    first.applySetVariables({ is_patient: true });
    expect(first.applyChoosePath({ to: 'person' }).step.moves[0]).toMatchObject({ node: 'person', edge: '/global/0' });

    const second = walker(clinicPathway()).w;
    second.start();
    // JSON text as the model writes it is read too.
    const fallback = second.applyChoosePath('{"to":"qualify"}');
    expect(fallback.result).toEqual({ ok: true, node: 'qualify' });
    expect(fallback.step.moves[0]).toMatchObject({ edge: '/edges/0' });
  });

  it('choose_path refuses a target that is no path from here, an if edge among them', () => {
    const { w } = walker(clinicPathway());
    w.start();
    w.applySetVariables({ is_patient: true });
    for (const args of [{ to: 'urgent' }, { to: 'book' }, {}, 'not json', { to: 3 }]) {
      const applied = w.applyChoosePath(args);
      expect(applied.result.error).toMatch(
        /^choose_path: .* is not a path from here; `to` is one of "person", "optout", "lookup"$/,
      );
      expect(applied.step.moves).toEqual([]);
    }
    expect(w.current.id).toBe('qualify');
  });

  it('set_variables checks each value by type, all or nothing', () => {
    const { w } = walker(clinicPathway());
    w.start();
    w.applySetVariables({ is_patient: true });
    const bad = w.applySetVariables({ reason: 'surgery', preferred_date: '2026-02-30', slot_count: 3 });
    expect(bad.result.error).toBe(
      'set_variables: reason must be one of "checkup", "cleaning", "pain"; preferred_date must be a date (YYYY-MM-DD); slot_count is not collected at this step (it collects reason, preferred_date); nothing was set',
    );
    expect(w.variables).toEqual({ is_patient: true });
    expect(w.applySetVariables({}).result.error).toMatch(/at least one of reason, preferred_date/);
    expect(w.applySetVariables(['x']).result.error).toMatch(/at least one/);
  });

  it('set_variables types: booleans, numbers, dates, phones and emails', () => {
    const document: PathwayDocument = {
      name: 'Types',
      start: 'ask',
      variables: {
        b: { type: 'boolean' },
        n: { type: 'number' },
        d: { type: 'date' },
        p: { type: 'phone' },
        e: { type: 'email' },
        s: { type: 'string' },
      },
      nodes: [
        { id: 'ask', type: 'conversation', extract: ['b', 'n', 'd', 'p', 'e', 's'] },
        { id: 'end', type: 'end' },
      ],
      edges: [{ from: 'ask', to: 'end', when: 'done', keywords: ['done'] }],
    };
    const { w } = walker(document);
    w.start();
    const wrong = w.applySetVariables({
      b: 'yes',
      n: 'many',
      d: 'tomorrow',
      p: '555-0100',
      e: 'ada at example',
      s: '  ',
    });
    expect(wrong.result.error).toBe(
      'set_variables: b must be true or false; n must be a number; d must be a date (YYYY-MM-DD); p must be a phone number in E.164 (such as +14155550123); e must be an email address; s must be a non-empty string; nothing was set',
    );
    const right = w.applySetVariables({
      b: 'false',
      n: '1,250',
      d: '2026-12-01T09:00:00Z',
      p: '(415) 555-0123',
      e: ' ada@example.com ',
      s: ' Ada ',
    });
    expect(right.result).toEqual({
      ok: true,
      set: { b: false, n: 1250, d: '2026-12-01', p: '+14155550123', e: 'ada@example.com', s: 'Ada' },
      node: 'ask',
    });
    expect(w.applySetVariables({ p: '+442079460958' }).result).toMatchObject({ set: { p: '+442079460958' } });
  });
});

describe('PathwayWalker: webhook, digits and sms nodes', () => {
  /** The clinic walked to its webhook node. */
  function atLookup() {
    const made = walker(clinicPathway());
    made.w.start();
    made.w.applySetVariables({ is_patient: true });
    const step = made.w.applySetVariables({ reason: 'cleaning', preferred_date: '2026-11-26' }).step;
    return { ...made, step };
  }

  it('a webhook node yields its request, the body filled and JSON-escaped, and waits', () => {
    const { w, step } = atLookup();
    expect(step.effects).toEqual([
      {
        kind: 'webhook',
        node: 'lookup',
        url: 'https://clinic.example.com/slots',
        method: 'POST',
        body: '{"reason": "cleaning", "date": "2026-11-26", "patient": true, "note": "says \\"hi\\""}',
        assign: { slot_count: '$.count', first_slot: '$.slots[0].start' },
      },
    ]);
    expect(JSON.parse((step.effects[0] as { body: string }).body)).toMatchObject({ note: 'says "hi"', patient: true });
    expect(w.state).toBe('webhook');
    expect(w.applySetVariables({ reason: 'pain' }).result).toEqual({
      error: 'the step "lookup" is waiting for its request',
    });
    expect(w.tools()).toEqual([]);
  });

  it('completeWebhook assigns by JSONPath, then takes the if edge that holds', () => {
    const { w, clock } = atLookup();
    clock.advance(900);
    const step = w.completeWebhook({
      ok: true,
      result: { count: '2', slots: [{ start: '2026-11-26T09:00:00Z' }, { start: '2026-11-26T11:00:00Z' }] },
    });
    expect(step.set).toEqual({ slot_count: 2, first_slot: '2026-11-26T09:00:00Z' });
    expect(step.moves).toEqual([{ node: 'book', atMs: 900, edge: '/edges/4', from: 'lookup' }]);
    expect(step.effects).toEqual([
      {
        kind: 'conversation',
        node: 'book',
        say: 'I can book you for 2026-11-26T09:00:00Z. What phone number and email should the confirmation go to?',
      },
    ]);
    expect(() => w.completeWebhook({ ok: true, result: {} })).toThrow(/no webhook node/);
  });

  it('a webhook node with no edge that leads on from its answer fails the walk (pathway_error)', () => {
    const document = clinicPathway();
    document.edges = document.edges.filter((e) => !(e.from === 'lookup' && e.if === undefined));
    const { w } = walker(document);
    w.start();
    w.applySetVariables({ is_patient: true });
    w.applySetVariables({ reason: 'cleaning', preferred_date: '2026-11-26' });
    const step = w.completeWebhook({ ok: true, result: { count: 0 } });
    expect(step.effects).toEqual([
      {
        kind: 'failed',
        node: 'lookup',
        outcome: 'pathway_error',
        message: 'webhook node "lookup" has no edge to lead on by',
      },
    ]);
    expect(w.state).toBe('finished');
    expect(w.failed).toBe('webhook node "lookup" has no edge to lead on by');
  });

  it('a failed webhook, or an answer without the fields, takes the unconditioned edge', () => {
    const failed = atLookup();
    expect(failed.w.completeWebhook({ ok: false, error: 'HTTP 500 (after a retry)' }).effects).toEqual([
      { kind: 'end', node: 'no_slots', say: 'Sorry, nothing is open on 2026-11-26. Goodbye.' },
    ]);
    const empty = atLookup();
    const step = empty.w.completeWebhook({ ok: true, result: { count: 0, slots: [] } });
    expect(step.set).toEqual({ slot_count: 0 });
    expect(step.moves[0]).toMatchObject({ node: 'no_slots', edge: '/edges/5' });
  });

  it('a webhook value that does not fit its variable is not assigned, with a warning', () => {
    const { w } = atLookup();
    const step = w.completeWebhook({ ok: true, result: { count: 'several', slots: [{ start: 9 }] } });
    expect(step.set).toEqual({ first_slot: '9' });
    expect(step.warnings).toEqual(['webhook node "lookup": slot_count must be a number; not assigned']);
    expect(w.current.id).toBe('no_slots');
  });

  it('the booking chain: an sms node texts and leads on to the end in one step', () => {
    const { w } = atLookup();
    w.completeWebhook({ ok: true, result: { count: 1, slots: [{ start: 'Thursday at 9' }] } });
    const step = w.applySetVariables({ phone: '+14155550123', email: 'ada@example.com' }).step;
    expect(step.effects).toEqual([
      { kind: 'sms', node: 'confirm', text: 'Bright Dental: you are booked for Thursday at 9.' },
      { kind: 'end', node: 'done', say: 'You are all set, Ada. Goodbye!' },
    ]);
    expect(step.moves.map((m) => [m.from, m.node])).toEqual([
      ['book', 'confirm'],
      ['confirm', 'done'],
    ]);
    expect(w.state).toBe('finished');
    expect(w.failed).toBeNull();
  });

  it('a chain of digits and sms nodes runs from the start up to the conversation', () => {
    const { w } = walker(menuPathway());
    const step = w.start();
    expect(step.effects).toEqual([
      { kind: 'digits', node: 'press', send: '1w2#' },
      { kind: 'sms', node: 'notify', text: 'We are calling the pharmacy for Ada at 2026-11-23T10:00:00Z.' },
      { kind: 'conversation', node: 'ask', say: 'Is the refill for Ada ready?' },
    ]);
    expect(step.moves.map((m) => m.node)).toEqual(['press', 'notify', 'ask']);
    expect(w.moves).toBe(2);
    expect(w.applySetVariables({ refill_ready: false }).step.effects).toEqual([
      { kind: 'end', node: 'later', say: 'We will call back tomorrow.' },
    ]);
  });

  it('a non-speaking node with no edge to take fails the walk: pathway_error', () => {
    const document: PathwayDocument = {
      name: 'Stuck',
      start: 'press',
      variables: { x: { type: 'string' } },
      nodes: [
        { id: 'press', type: 'digits', send: '9' },
        { id: 'end', type: 'end' },
      ],
      edges: [{ from: 'press', to: 'end', if: { var: 'x', op: 'exists' } }],
    };
    const { w } = walker(document);
    expect(w.start().effects).toEqual([
      { kind: 'digits', node: 'press', send: '9' },
      {
        kind: 'failed',
        node: 'press',
        outcome: 'pathway_error',
        message: 'digits node "press" has no edge to lead on by',
      },
    ]);
    expect(w.state).toBe('finished');
    expect(w.failed).toMatch(/no edge/);
  });
});

describe('PathwayWalker: if edges on arrival, the move limit', () => {
  it('a conversation node whose if edge already holds (a call variable) is passed by, unspoken', () => {
    const { w } = walker(clinicPathway(), { variables: { is_patient: true, reason: 'pain' } });
    w.start();
    const step = w.applyChoosePath({ to: 'qualify' }).step;
    expect(step.effects).toEqual([
      {
        kind: 'transfer',
        node: 'urgent',
        humanAgentId: 'ha_urgent',
        say: 'Let me put you through to our urgent line.',
      },
    ]);
    expect(step.moves.map((m) => m.node)).toEqual(['qualify', 'urgent']);
  });

  it('a loop of non-speaking nodes stops at the move limit with pathway_error', () => {
    const document: PathwayDocument = {
      name: 'Loop',
      start: 'a',
      nodes: [
        { id: 'a', type: 'digits', send: '1' },
        { id: 'b', type: 'sms', text: 'again' },
        { id: 'end', type: 'end' },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    };
    const { w } = walker(document);
    const step = w.start();
    expect(w.moves).toBe(MAX_MOVES);
    expect(step.moves).toHaveLength(MAX_MOVES + 1);
    expect(step.effects.at(-1)).toEqual({
      kind: 'failed',
      node: 'a',
      outcome: 'pathway_error',
      message: 'the pathway took 100 edges, the most one call may take',
    });
    expect(w.snapshot().path).toHaveLength(MAX_MOVES + 1);
  });

  it('moves by the model and by a webhook count too; the failing one answers the model with an error', () => {
    const { w } = walker(clinicPathway(), { maxMoves: 2 });
    w.start();
    w.applyChoosePath({ to: 'qualify' });
    expect(w.applyChoosePath({ to: 'lookup' }).result).toEqual({ ok: true, node: 'lookup' });
    expect(w.completeWebhook({ ok: false, error: 'timed out after 5000 ms' }).effects).toEqual([
      {
        kind: 'failed',
        node: 'lookup',
        outcome: 'pathway_error',
        message: 'the pathway took 2 edges, the most one call may take',
      },
    ]);
    const other = walker(menuPathway(), { maxMoves: 2 }).w;
    other.start();
    const last = other.applyChoosePath({ to: 'thanks' });
    expect(last.step.effects).toEqual([
      {
        kind: 'failed',
        node: 'ask',
        outcome: 'pathway_error',
        message: 'the pathway took 2 edges, the most one call may take',
      },
    ]);
    expect(last.result).toEqual({
      error: 'the pathway cannot go on: the pathway took 2 edges, the most one call may take',
    });
    expect(other.failed).toMatch(/2 edges/);
  });
});

describe('PathwayWalker: templates and the snapshot', () => {
  it('names with no value are filled with nothing and listed once as warnings', () => {
    const { w } = walker(clinicPathway(), { contact: { name: null } });
    const step = w.start();
    expect(step.effects[0]).toEqual({
      kind: 'conversation',
      node: 'greet',
      say: 'Hello , this is Bright Dental. Are you an existing patient?',
    });
    expect(step.warnings).toEqual(['{{contact.name}} has no value: filled with nothing']);
    w.nodeInstructions();
    w.applySetVariables({ is_patient: true });
    w.nodeInstructions();
    expect(w.warnings).toEqual(['{{contact.name}} has no value: filled with nothing']);
  });

  it('snapshot: id, name, the path with edges, every variable', () => {
    const { w, clock } = walker(clinicPathway(), { id: 'pw_1', variables: { campaign: 'autumn' } });
    w.start();
    clock.advance(1500);
    w.applySetVariables({ is_patient: true });
    clock.advance(500);
    w.applyChoosePath({ to: 'optout' });
    expect(w.snapshot()).toEqual({
      id: 'pw_1',
      name: 'Bright Dental bookings',
      path: [
        { node: 'greet', atMs: 0 },
        { node: 'qualify', atMs: 1500, edge: '/edges/0' },
        { node: 'optout', atMs: 2000, edge: '/global/1' },
      ],
      variables: { campaign: 'autumn', is_patient: true },
    });
    // A copy: later changes do not reach it; an inline pathway has no id.
    const inline = walker(clinicPathway(), { id: null, callStartMs: START - 3000 }).w;
    inline.start();
    expect(inline.snapshot()).toEqual({
      name: 'Bright Dental bookings',
      path: [{ node: 'greet', atMs: 3000 }],
      variables: {},
    });
  });
});
