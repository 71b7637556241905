// What a real model sees at a node: the instructions and the generated
// JSON Schemas of choose_path and set_variables.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { ParameterSchemas } from '../../../src/modules/custom-tools/parameters.js';
import { PathwayWalker } from '../../../src/modules/pathways/walker.js';
import { clinicPathway } from './fixtures.js';

const START = Date.parse('2026-11-23T10:00:00Z');

function atQualify() {
  const w = new PathwayWalker({
    document: clinicPathway(),
    clock: new ManualClock(START),
    contact: { name: 'Ada' },
    variables: { campaign: 'autumn' },
  });
  w.start();
  w.applySetVariables({ is_patient: true });
  return w;
}

describe('nodeInstructions', () => {
  it('gives the prompt filled, the say as spoken, the variables and the paths', () => {
    const w = atQualify();
    w.applySetVariables({ reason: 'checkup' });
    expect(w.nodeInstructions()).toBe(
      [
        'This call follows the conversation pathway "Bright Dental bookings". The current step is "qualify".',
        'On arriving at this step the agent said, as written (do not say it again): "What can we help with: a checkup, a cleaning, or pain?"',
        'What to do at this step: Find out why Ada calls and which day suits them',
        'Collect at this step, calling set_variables as soon as the caller gives a value (once all have values the pathway moves on by itself, so choose a path first if one applies):',
        '- reason (enum: checkup, cleaning, pain) [has "checkup"]',
        '- preferred_date (date): The day the caller wants [still needed]',
        'Variables so far: {"campaign":"autumn","is_patient":true,"reason":"checkup"}',
        'Paths from here (call choose_path with `to` once one applies):',
        '- "person": The caller asks for a person (at any step)',
        '- "optout": The caller asks not to be called again (at any step)',
        '- "person": The caller wants something other than an appointment',
        '- "lookup": this step is done (nothing else applies)',
      ].join('\n'),
    );
  });

  it('says when a webhook runs and when the pathway has ended', () => {
    const w = atQualify();
    w.applySetVariables({ reason: 'checkup', preferred_date: '2026-11-24' });
    expect(w.nodeInstructions()).toMatch(/The current step is "lookup".\nA step without speech is running/);
    w.completeWebhook({ ok: true, result: { count: 0 } });
    expect(w.nodeInstructions()).toMatch(/The pathway has ended.$/);
  });
});

describe('the pathway tools', () => {
  // The custom tools' Ajv: the schemas compile and mean what applySetVariables checks.
  const schemas = new ParameterSchemas();
  const accepts = (schema: Record<string, unknown>) => {
    expect(schemas.problem(schema)).toBeNull();
    return (args: unknown) => schemas.argumentProblem(schema, args) === null;
  };

  it('choose_path: an enum of the targets, each once', () => {
    const [choose] = atQualify().tools();
    expect(choose!.name).toBe('choose_path');
    expect(choose!.parameters).toEqual({
      type: 'object',
      properties: { to: { type: 'string', enum: ['person', 'optout', 'lookup'], description: 'The step to go to' } },
      required: ['to'],
      additionalProperties: false,
    });
    expect(choose!.description).toContain('- "lookup": this step is done');
  });

  it('set_variables: each extract variable typed by its declaration; the schema accepts what applySetVariables does', () => {
    const w = new PathwayWalker({ document: clinicPathway(), clock: new ManualClock(START) });
    w.start();
    expect(w.tools().map((t) => t.name)).toEqual(['choose_path', 'set_variables']);
    w.applySetVariables({ is_patient: false });
    w.applySetVariables({ reason: 'cleaning', preferred_date: '2026-11-24' });
    w.completeWebhook({ ok: true, result: { count: 1, slots: [{ start: 'Tuesday 9:00' }] } });
    const set = w.tools().find((t) => t.name === 'set_variables')!;
    expect(set.parameters).toEqual({
      type: 'object',
      properties: {
        phone: {
          type: 'string',
          pattern: '^\\+[1-9]\\d{6,14}$',
          description: 'phone (a phone number in E.164, such as +14155550123)',
        },
        email: { type: 'string', format: 'email', maxLength: 254, description: 'email (an email address)' },
      },
      minProperties: 1,
      additionalProperties: false,
    });
    const validate = accepts(set.parameters);
    expect(validate({ phone: '+14155550123', email: 'ada@example.com' })).toBe(true);
    expect(validate({ phone: '555-0100' })).toBe(false);
    expect(validate({})).toBe(false);
  });

  it('set_variables schemas of every type', () => {
    const w = new PathwayWalker({
      document: {
        name: 'Types',
        start: 'ask',
        variables: {
          s: { type: 'string' },
          n: { type: 'number' },
          b: { type: 'boolean' },
          d: { type: 'date' },
          e: { type: 'enum', values: ['x', 'y'] },
        },
        nodes: [
          { id: 'ask', type: 'conversation', extract: ['s', 'n', 'b', 'd', 'e'] },
          { id: 'end', type: 'end' },
        ],
        edges: [],
      },
      clock: new ManualClock(START),
    });
    w.start();
    // No edge leaves: no choose_path.
    const tools = w.tools();
    expect(tools.map((t) => t.name)).toEqual(['set_variables']);
    expect((tools[0]!.parameters as { properties: unknown }).properties).toEqual({
      s: { type: 'string', minLength: 1, maxLength: 2000, description: 's' },
      n: { type: 'number', description: 'n' },
      b: { type: 'boolean', description: 'b' },
      d: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'd (a date, YYYY-MM-DD)' },
      e: { type: 'string', enum: ['x', 'y'], description: 'e' },
    });
    const validate = accepts(tools[0]!.parameters);
    expect(validate({ s: 'a', n: 2, b: true, d: '2026-01-02', e: 'y' })).toBe(true);
    expect(validate({ e: 'z' })).toBe(false);
    expect(w.nodeInstructions()).toContain('No path leads on from here by the conversation');
  });
});
