import { describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';

describe('newId', () => {
  it('makes unique, time-ordered RFC 9562 version 7 ids, also within one millisecond and across pool refills', () => {
    const now = Date.now();
    const ids = Array.from({ length: 2000 }, () => newId(now));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.parseInt(ids[0].replace(/-/g, '').slice(0, 12), 16)).toBeGreaterThanOrEqual(now);
  });

  it('does not repeat the random part across ids (the pool is consumed, not reused)', () => {
    const tails = new Set(Array.from({ length: 600 }, () => newId().slice(-12)));
    expect(tails.size).toBe(600);
  });
});
