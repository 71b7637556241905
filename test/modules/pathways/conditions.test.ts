// `if` conditions: every operator on every variable type.
import { describe, expect, it } from 'vitest';
import { conditionHolds } from '../../../src/modules/pathways/conditions.js';
import type { Condition } from '../../../src/modules/pathways/schemas.js';
import type { VariableDeclaration } from '../../../src/modules/pathways/values.js';

const declared: Record<string, VariableDeclaration> = {
  s: { type: 'string' },
  n: { type: 'number' },
  b: { type: 'boolean' },
  d: { type: 'date' },
  p: { type: 'phone' },
  e: { type: 'email' },
  plan: { type: 'enum', values: ['basic', 'pro'] },
};

const holds = (condition: Condition, variables: Record<string, unknown>) =>
  conditionHolds(condition, variables, declared);

describe('conditionHolds', () => {
  it('exists: a value that is not absent, null or empty', () => {
    expect(holds({ var: 's', op: 'exists' }, { s: 'x' })).toBe(true);
    expect(holds({ var: 'b', op: 'exists' }, { b: false })).toBe(true);
    expect(holds({ var: 'n', op: 'exists' }, { n: 0 })).toBe(true);
    for (const variables of [{}, { s: '' }, { s: null }])
      expect(holds({ var: 's', op: 'exists' }, variables)).toBe(false);
  });

  it('every other operator is false while the variable has no value, ne too', () => {
    for (const op of ['eq', 'ne', 'gt', 'lt'] as const) expect(holds({ var: 'n', op, value: 1 }, {})).toBe(false);
    expect(holds({ var: 'plan', op: 'in', value: ['basic'] }, {})).toBe(false);
  });

  it('numbers compare as numbers (a numeric string included)', () => {
    expect(holds({ var: 'n', op: 'gt', value: 9 }, { n: 10 })).toBe(true);
    expect(holds({ var: 'n', op: 'gt', value: 9 }, { n: '10' })).toBe(true);
    expect(holds({ var: 'n', op: 'lt', value: 9 }, { n: 10 })).toBe(false);
    expect(holds({ var: 'n', op: 'eq', value: 2 }, { n: '2.0' })).toBe(true);
    expect(holds({ var: 'n', op: 'ne', value: 2 }, { n: 3 })).toBe(true);
    expect(holds({ var: 'n', op: 'in', value: [1, 2, 3] }, { n: 3 })).toBe(true);
    expect(holds({ var: 'n', op: 'gt', value: 1 }, { n: 'lots' })).toBe(false);
  });

  it('dates compare as days (a time as its day)', () => {
    expect(holds({ var: 'd', op: 'gt', value: '2026-11-30' }, { d: '2026-12-01' })).toBe(true);
    expect(holds({ var: 'd', op: 'lt', value: '2026-11-30' }, { d: '2026-12-01' })).toBe(false);
    expect(holds({ var: 'd', op: 'eq', value: '2026-12-01' }, { d: '2026-12-01T15:00:00Z' })).toBe(true);
    expect(holds({ var: 'd', op: 'in', value: ['2026-12-01', '2026-12-02'] }, { d: '2026-12-02' })).toBe(true);
    expect(holds({ var: 'd', op: 'gt', value: '2026-01-01' }, { d: 'tomorrow' })).toBe(false);
  });

  it('booleans as they are; strings, emails and enum values without regard to case', () => {
    expect(holds({ var: 'b', op: 'eq', value: true }, { b: true })).toBe(true);
    expect(holds({ var: 'b', op: 'eq', value: true }, { b: false })).toBe(false);
    expect(holds({ var: 'b', op: 'ne', value: true }, { b: false })).toBe(true);
    expect(holds({ var: 'b', op: 'eq', value: false }, { b: 'false' })).toBe(true);
    expect(holds({ var: 's', op: 'eq', value: 'Paris' }, { s: ' paris ' })).toBe(true);
    expect(holds({ var: 's', op: 'in', value: ['Rome', 'Paris'] }, { s: 'PARIS' })).toBe(true);
    expect(holds({ var: 'e', op: 'eq', value: 'Ada@Example.com' }, { e: 'ada@example.com' })).toBe(true);
    expect(holds({ var: 'plan', op: 'ne', value: 'pro' }, { plan: 'basic' })).toBe(true);
    expect(holds({ var: 'plan', op: 'in', value: ['pro'] }, { plan: 'basic' })).toBe(false);
  });

  it('phones compare as E.164', () => {
    expect(holds({ var: 'p', op: 'eq', value: '+14155550123' }, { p: '(415) 555-0123' })).toBe(true);
    expect(holds({ var: 'p', op: 'in', value: ['+442079460958', '+14155550123'] }, { p: '+1 415 555 0123' })).toBe(
      true,
    );
  });
});
