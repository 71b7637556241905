// The sandbox walk: a pathway walked from the caller's words alone, exactly.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { UNCLEAR_REPLY, keywordEdgeFor, sandboxTurn } from '../../../src/modules/pathways/sandbox-walk.js';
import type { PathwayDocument } from '../../../src/modules/pathways/schemas.js';
import { PathwayWalker } from '../../../src/modules/pathways/walker.js';
import { clinicPathway, menuPathway } from './fixtures.js';

// Monday 23 November 2026.
const START = Date.parse('2026-11-23T10:00:00Z');

function started(document: PathwayDocument) {
  const clock = new ManualClock(START);
  const w = new PathwayWalker({ document, clock, contact: { name: 'Ada' } });
  w.start();
  return { w, clock };
}

describe('sandboxTurn on the clinic pathway', () => {
  it('walks greet → qualify → lookup → book → confirm → done from the words', () => {
    const { w, clock } = started(clinicPathway());
    clock.advance(3000);
    const greet = sandboxTurn(w, 'Yes, I am.');
    expect(greet.step.set).toEqual({ is_patient: true });
    expect(greet.step.moves).toEqual([{ node: 'qualify', atMs: 3000, edge: '/edges/0', from: 'greet' }]);
    expect(greet.reply).toBeNull();

    // One of two variables: the walk asks for the other.
    const reason = sandboxTurn(w, 'I need a cleaning');
    expect(reason.step.set).toEqual({ reason: 'cleaning' });
    expect(reason.step.moves).toEqual([]);
    expect(reason.reply).toBe('Could you tell me the preferred date?');

    const date = sandboxTurn(w, 'Next Thursday, if possible');
    expect(date.step.set).toEqual({ preferred_date: '2026-11-26' });
    expect(date.step.effects).toEqual([
      expect.objectContaining({
        kind: 'webhook',
        node: 'lookup',
        body: '{"reason": "cleaning", "date": "2026-11-26", "patient": true, "note": ""}',
      }),
    ]);
    expect(date.reply).toBeNull();
    // While the request runs a turn does nothing.
    expect(sandboxTurn(w, 'hello?')).toEqual({
      step: { moves: [], effects: [], set: {}, warnings: [] },
      keywordEdge: null,
      reply: null,
    });

    w.completeWebhook({ ok: true, result: { count: 1, slots: [{ start: 'Thursday at 9' }] } });
    expect(w.current.id).toBe('book');
    const phone = sandboxTurn(w, 'four one five five five five oh one two three');
    expect(phone.step.set).toEqual({ phone: '+14155550123' });
    expect(phone.reply).toBe('Could you tell me the email?');
    const email = sandboxTurn(w, 'ada at example dot com');
    expect(email.step.effects).toEqual([
      { kind: 'sms', node: 'confirm', text: 'Bright Dental: you are booked for Thursday at 9.' },
      { kind: 'end', node: 'done', say: 'You are all set, Ada. Goodbye!' },
    ]);
    expect(w.snapshot().path.map((p) => p.node)).toEqual(['greet', 'qualify', 'lookup', 'book', 'confirm', 'done']);
    expect(w.snapshot().variables).toEqual({
      is_patient: true,
      reason: 'cleaning',
      preferred_date: '2026-11-26',
      slot_count: 1,
      first_slot: 'Thursday at 9',
      phone: '+14155550123',
      email: 'ada@example.com',
    });
  });

  it('an if edge decided on the words: pain goes to the urgent line', () => {
    const { w } = started(clinicPathway());
    sandboxTurn(w, 'no');
    const turn = sandboxTurn(w, "I'm in a lot of pain");
    expect(turn.step.effects).toEqual([
      {
        kind: 'transfer',
        node: 'urgent',
        humanAgentId: 'ha_urgent',
        say: 'Let me put you through to our urgent line.',
      },
    ]);
    expect(turn.step.moves[0]).toMatchObject({ edge: '/edges/1' });
  });

  it('keywords: global edges first, then local ones; the words are not read as variables then', () => {
    const { w } = started(clinicPathway());
    const global = sandboxTurn(w, 'Can I speak to a receptionist?');
    expect(global.keywordEdge).toMatchObject({ ref: '/global/0', to: 'person' });
    expect(global.step.effects).toEqual([
      { kind: 'transfer', node: 'person', say: 'One moment, I will find a receptionist.' },
    ]);

    const local = started(clinicPathway()).w;
    sandboxTurn(local, 'yes');
    const billing = sandboxTurn(local, 'It is about my invoice for a cleaning');
    expect(billing.keywordEdge).toMatchObject({ ref: '/edges/2' });
    expect(billing.step.set).toEqual({});

    const both = started(clinicPathway()).w;
    sandboxTurn(both, 'yes');
    // "stop calling" (global) wins over "invoice" (local).
    expect(sandboxTurn(both, 'invoice? stop calling me').keywordEdge).toMatchObject({ ref: '/global/1', to: 'optout' });
  });

  it('an unclear turn is not acted on', () => {
    const { w } = started(clinicPathway());
    const turn = sandboxTurn(w, 'yes (unclear)');
    expect(turn).toEqual({
      step: { moves: [], effects: [], set: {}, warnings: [] },
      keywordEdge: null,
      reply: UNCLEAR_REPLY,
    });
    expect(w.variables).toEqual({});
  });

  it('words with nothing to collect: the node stays and asks again', () => {
    const { w } = started(clinicPathway());
    const turn = sandboxTurn(w, 'maybe');
    expect(turn.step.moves).toEqual([]);
    expect(turn.reply).toBe('Could you tell me the is patient?');
  });
});

describe('sandboxTurn: keypad, fallback, strings', () => {
  it('keypad digits take a keyword edge', () => {
    const { w } = started(menuPathway());
    const turn = sandboxTurn(w, '1');
    expect(turn.keywordEdge).toMatchObject({ ref: '/edges/3', to: 'thanks' });
    expect(turn.step.effects).toEqual([{ kind: 'end', node: 'thanks', say: 'Thank you!' }]);
  });

  it('a yes or no decides the if edges of the menu pathway', () => {
    const { w } = started(menuPathway());
    expect(sandboxTurn(w, 'No, not yet').step.effects).toEqual([
      { kind: 'end', node: 'later', say: 'We will call back tomorrow.' },
    ]);
  });

  /** A survey: a string answer, then a node without extract that leads on by its fallback; a node with neither say nor extract. */
  const survey = (): PathwayDocument => ({
    name: 'Survey',
    start: 'name',
    variables: { full_name: { type: 'string' }, phone: { type: 'phone' }, score: { type: 'number' } },
    nodes: [
      { id: 'name', type: 'conversation', say: 'Your name and number, please?', extract: ['full_name', 'phone'] },
      { id: 'rate', type: 'conversation', say: 'From zero to ten, how did we do?', extract: ['score'] },
      { id: 'comment', type: 'conversation', prompt: 'Ask for any comment' },
      { id: 'promoter', type: 'end', say: 'Thank you, {{full_name}}!' },
      { id: 'bye', type: 'end', say: 'Thanks for the feedback.' },
    ],
    edges: [
      { from: 'name', to: 'rate' },
      { from: 'rate', to: 'promoter', if: { var: 'score', op: 'gt', value: 8 } },
      { from: 'rate', to: 'comment' },
      { from: 'comment', to: 'bye' },
    ],
  });

  it('a string takes the whole answer only when nothing typed was heard', () => {
    const { w } = started(survey());
    const phone = sandboxTurn(w, '415 555 0123');
    expect(phone.step.set).toEqual({ phone: '+14155550123' });
    expect(phone.reply).toBe('Could you tell me the full name?');
    const name = sandboxTurn(w, 'Ada Lovelace');
    expect(name.step.set).toEqual({ full_name: 'Ada Lovelace' });
    expect(name.step.effects).toEqual([
      { kind: 'conversation', node: 'rate', say: 'From zero to ten, how did we do?' },
    ]);
    expect(sandboxTurn(w, 'nine').step.effects).toEqual([
      { kind: 'end', node: 'promoter', say: 'Thank you, Ada Lovelace!' },
    ]);
  });

  it('the fallback after the if edges; a node with nothing to collect leads on by it on any answer', () => {
    const { w } = started(survey());
    sandboxTurn(w, 'Ada');
    sandboxTurn(w, '+14155550123');
    const rate = sandboxTurn(w, 'seven');
    expect(rate.step.moves.map((m) => m.node)).toEqual(['comment']);
    // No say, nothing to collect: the walk leaves the answer to the sandbox engine.
    expect(rate.step.effects).toEqual([{ kind: 'conversation', node: 'comment' }]);
    expect(rate.reply).toBeNull();
    expect(sandboxTurn(w, 'all good').step.effects).toEqual([
      { kind: 'end', node: 'bye', say: 'Thanks for the feedback.' },
    ]);
  });
});

describe('keywordEdgeFor and nodeTools', () => {
  it('finds the keyword edge a keypad turn takes, for a call with a real model too', () => {
    const { w } = started(menuPathway());
    expect(keywordEdgeFor(w, '2')).toBeNull();
    const edge = keywordEdgeFor(w, '1')!;
    expect(w.take(edge).effects).toEqual([{ kind: 'end', node: 'thanks', say: 'Thank you!' }]);
  });

  it("gives the current conversation node's tools, none elsewhere", () => {
    const document = clinicPathway();
    (document.nodes[0] as { tools?: string[] }).tools = ['check_availability'];
    const { w } = started(document);
    expect(w.nodeTools()).toEqual(['check_availability']);
    sandboxTurn(w, 'yes');
    expect(w.nodeTools()).toEqual([]);
  });
});
