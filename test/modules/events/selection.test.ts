// Type and payload-filter parsing and matching (pure functions).
import { describe, expect, it } from 'vitest';
import { matchesPayload, parseFilters, parseTypes } from '../../../src/modules/events/selection.js';
import { WildcardPattern } from '../../../src/lib/wildcard.js';
import { StreamEvent } from '../../../src/modules/events/stream-event.js';

const event = (payload: unknown) =>
  new StreamEvent({ id: 1, user_id: 'u', type: 'publish', payload: JSON.stringify(payload), created_at: 0 });
const matches = (query: Record<string, unknown>, payload: unknown) =>
  matchesPayload({ types: null, filters: parseFilters(query) }, event(payload));

describe('event selection', () => {
  it('parses one type, a comma-separated list, and all / * as every type', () => {
    expect(parseTypes('publish')).toEqual(['publish']);
    expect(parseTypes('publish, unpublish,publish')).toEqual(['publish', 'unpublish']);
    expect(parseTypes('all')).toBeNull();
    expect(parseTypes('*')).toBeNull();
    expect(() => parseTypes('publish,')).toThrow(/unknown event type/);
    expect(() => parseTypes('ALL')).toThrow(/unknown event type "ALL"/);
  });

  it('matches exact text, with * standing for any run of characters and nothing else special', () => {
    expect(matches({ object_id: '0193*' }, { object_id: '0193abc' })).toBe(true);
    expect(matches({ object_id: '0193*' }, { object_id: 'x0193abc' })).toBe(false);
    expect(matches({ object_id: '*9*c' }, { object_id: '0193abc' })).toBe(true);
    expect(matches({ object_id: 'a.c' }, { object_id: 'abc' })).toBe(false);
    expect(matches({ object_id: '(a|b)+' }, { object_id: '(a|b)+' })).toBe(true);
    expect(matches({ object_id: 'ABC' }, { object_id: 'abc' })).toBe(false);
    expect(matches({ object_id: '*' }, { object_id: '' })).toBe(true);
  });

  it('compiles * into the linear-time matcher, never a regular expression (nine stars froze the event loop)', () => {
    const [filter] = parseFilters({ id: '*********!' });
    expect(filter.patterns[0]).toBeInstanceOf(WildcardPattern);
    expect(matches({ id: '*********!' }, { id: 'a'.repeat(36) })).toBe(false);
  });

  it('compares numbers and booleans as their JSON text; missing, null, objects and arrays never match', () => {
    expect(matches({ n: '42' }, { n: 42 })).toBe(true);
    expect(matches({ ok: 'true' }, { ok: true })).toBe(true);
    for (const value of [undefined, null, { a: 1 }, ['x']]) expect(matches({ f: '*' }, { f: value })).toBe(false);
    expect(matches({ 'meta.kind': 'x' }, { meta: { kind: 'x' } })).toBe(true);
    expect(matches({ 'meta.kind': 'x' }, { 'meta.kind': 'x' })).toBe(true);
  });

  it('needs every field to match, and any one of a field’s repeated values', () => {
    expect(matches({ type: ['calls', 'contacts'], related_id: 'r' }, { type: 'contacts', related_id: 'r' })).toBe(true);
    expect(matches({ type: ['calls', 'contacts'], related_id: 'r' }, { type: 'contacts', related_id: 's' })).toBe(
      false,
    );
  });

  it('lets object_id match the id of object_created (the documented ?object_id=0193* follows an object from its creation on)', () => {
    const typed = (type: string, payload: unknown) =>
      new StreamEvent({ id: 1, user_id: 'u', type, payload: JSON.stringify(payload), created_at: 0 });
    const selection = (query: Record<string, unknown>) => ({ types: null, filters: parseFilters(query) });
    expect(
      matchesPayload(selection({ object_id: '0193*' }), typed('object_created', { id: '0193abc', key_id: 'k' })),
    ).toBe(true);
    expect(
      matchesPayload(selection({ object_id: '0193abc' }), typed('object_created', { id: '0193abc', key_id: 'k' })),
    ).toBe(true);
    expect(
      matchesPayload(selection({ object_id: '0193*' }), typed('object_created', { id: 'x0193', key_id: 'k' })),
    ).toBe(false);
    expect(matchesPayload(selection({ object_id: '0193*' }), typed('object_updated', { object_id: '0193abc' }))).toBe(
      true,
    );
    // Only object_created: another payload's `id` is not its object.
    expect(matchesPayload(selection({ object_id: '0193*' }), typed('publish', { id: '0193abc' }))).toBe(false);
    // The ticket is not a filter either.
    expect(matchesPayload(selection({ ticket: 'abc' }), typed('publish', { type: 'calls' }))).toBe(true);
  });

  it('ignores lastEventId and refuses unusable filters', () => {
    expect(parseFilters({ lastEventId: '5', type: 'calls' }).map((f) => f.field)).toEqual(['type']);
    expect(() => parseFilters({ 'bad field': 'x' })).toThrow(/field name/);
    expect(() => parseFilters({ f: 'x'.repeat(257) })).toThrow(/at most 256/);
    expect(() => parseFilters(Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, 'x'])))).toThrow(
      /at most 20 filters/,
    );
  });
});
