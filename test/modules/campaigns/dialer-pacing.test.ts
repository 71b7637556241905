// The dialer's timing on the app's manual clock (SQLite, or PostgreSQL with
// DATABASE_URL): two dialers on one database share the claims about evenly
// because their rounds wait tickMs × (0.5 + random()) (with a fixed wait they
// keep their phases and one takes nearly all); a round that comes late
// catches up the pacing slots of at most burstMs and never dials faster than
// the pacing. The dialers here are the app's store and service with calls
// that are only counted (nothing rings), so that only the claims are timed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/lib/clock.js';
import { CampaignDialer, type DialerSettings } from '../../../src/modules/campaigns/dialer.js';
import { pacingSlots } from '../../../src/modules/campaigns/pacing.js';
import type { AssembledCall } from '../../../src/providers/audio/interface.js';
import { type TestApp, createTestApp } from '../../support/app.js';
import { callConfig } from '../calls/support.js';
import { caller, createCampaign, post } from './support.js';

const MONDAY = Date.parse('2026-12-07T10:00:00Z');
let t: TestApp;
beforeEach(async () => {
  t = await createTestApp({ config: callConfig(), clock: new ManualClock(MONDAY) });
});
afterEach(async () => {
  await t.close();
});

/** A seeded generator in [0, 1) (mulberry32): the same waits on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** A dialer of the app's campaigns whose calls are only counted (the time of each placing). */
function countingDialer(instanceId: string, options: { random?: () => number; settings?: Partial<DialerSettings> }) {
  const placed: number[] = [];
  const warnings: unknown[] = [];
  const dialer = new CampaignDialer({
    store: t.services.campaigns.campaignStore,
    campaigns: t.services.campaigns.campaigns,
    calls: {
      start: async () => {
        placed.push(t.clock.now());
        return { sessionId: `none_${placed.length}` };
      },
      outcome: async () => null,
    },
    sessions: { assemble: async () => ({}) as AssembledCall },
    clock: t.clock,
    timers: t.clock,
    ...(options.random ? { random: options.random } : {}),
    instanceId,
    // A lease longer than the test: claims whose calls are never recorded stay claimed (counted once).
    settings: { tickMs: 250, leaseMs: 3600_000, maxBatch: 50, burstMs: 1000, ...options.settings },
    log: { warn: (obj) => void warnings.push(obj) },
  });
  return { dialer, placed, warnings };
}

const phones = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `C${i}`, phone: `+1415557${String(i).padStart(4, '0')}` }));

async function runningCampaign(contacts: number, callsPerMinute: number): Promise<string> {
  const c = await caller(t);
  const id = await createCampaign(t, c, {
    contacts: phones(contacts),
    pacing: { callsPerMinute, maxConcurrent: 1000 },
  });
  expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);
  return id;
}

describe('pacingSlots', () => {
  it('takes the slots due since the pointer, at most burstMs of them late, and moves the pointer a whole ms on', () => {
    // 600 a minute: one slot each 100 ms.
    expect(pacingSlots(1000, 999, 600, 1000).due).toBe(0);
    expect(pacingSlots(1000, 1000, 600, 1000).due).toBe(1);
    expect(pacingSlots(1000, 1350, 600, 1000).due).toBe(4);
    // 5 s late: the last second's slots and the one due now, not 51.
    const late = pacingSlots(1000, 6000, 600, 1000);
    expect(late.due).toBe(11);
    expect(late.after(11)).toBe(6100);
    expect(late.after(0)).toBe(5000);
    // 7 a minute (8571.43 ms): the pointer stays whole and never early.
    expect(pacingSlots(0, 0, 7, 1000).after(1)).toBe(8572);
    expect(pacingSlots(0, 0, 7, 1000).after(3)).toBe(25715);
  });
});

describe('dialer timing', { timeout: 120_000 }, () => {
  /** Two dialers started 10 ms apart on the app's clock, stepped 10 ms at a time for `ms`: their placings. */
  async function twoDialers(random: [() => number, () => number], ms: number) {
    const a = countingDialer('instance_a', { random: random[0] });
    const b = countingDialer('instance_b', { random: random[1] });
    a.dialer.start();
    t.clock.advance(10);
    b.dialer.start();
    for (let elapsed = 10; elapsed < ms; elapsed += 10) {
      t.clock.advance(10);
      await a.dialer.settled();
      await b.dialer.settled();
    }
    await a.dialer.stop();
    await b.dialer.stop();
    expect([...a.warnings, ...b.warnings]).toEqual([]);
    return { a: a.placed.length, b: b.placed.length };
  }

  it('two instances whose rounds wander split the claims 40-60 %', async () => {
    // 300 a minute for a minute: 300 slots, a round each 250 ms on average per instance.
    await runningCampaign(400, 300);
    const jittered = await twoDialers([seeded(1), seeded(2)], 60_000);
    const total = jittered.a + jittered.b;
    expect(total).toBeGreaterThanOrEqual(299);
    expect(total).toBeLessThanOrEqual(301);
    expect(jittered.a / total).toBeGreaterThanOrEqual(0.4);
    expect(jittered.a / total).toBeLessThanOrEqual(0.6);
  });

  it('with a fixed wait (no jitter) the instance whose rounds come first after each slot takes nearly all', async () => {
    // The contrast: random() always 0.5 is a fixed 250 ms wait; the instance started 10 ms earlier is always first after a slot.
    await runningCampaign(400, 300);
    const fixed = await twoDialers([() => 0.5, () => 0.5], 60_000);
    const fixedTotal = fixed.a + fixed.b;
    expect(fixedTotal).toBeGreaterThanOrEqual(299);
    expect(fixed.a / fixedTotal).toBeGreaterThan(0.9);
  });

  it('a late round catches up the slots of at most burstMs, and the dials never outrun the pacing', async () => {
    // 120 a minute: a slot each 500 ms; a late round catches up at most 2 s (4 slots and the one due now).
    await runningCampaign(300, 120);
    const { dialer, placed, warnings } = countingDialer('instance_a', { settings: { burstMs: 2000 } });
    const start = t.clock.now();
    const random = seeded(7);
    const rounds: Array<{ at: number; dials: number }> = [];
    const round = async () => {
      const before = placed.length;
      await dialer.round();
      await dialer.settled();
      rounds.push({ at: t.clock.now(), dials: placed.length - before });
    };
    // A minute of rounds 0 to 1.9 s apart (late, but within the burst): every slot due is taken, none early.
    await round();
    while (t.clock.now() - start < 60_000) {
      t.clock.advance(Math.floor(random() * 1900));
      await round();
      expect(placed.length).toBe(Math.floor((t.clock.now() - start) / 500) + 1);
    }
    expect(rounds.some((r) => r.dials >= 3)).toBe(true);
    expect(Math.max(...rounds.map((r) => r.dials))).toBeLessThanOrEqual(5);
    const inFirstMinute = placed.filter((at) => at < start + 60_000).length;
    expect(inFirstMinute).toBeLessThanOrEqual(120);

    // A stall of 6 s (beyond the burst): the next round takes the last 2 s of slots and the one due now, the rest are lost.
    const stalledFrom = placed.length;
    t.clock.advance(6000);
    await round();
    expect(placed.length - stalledFrom).toBe(5);
    // Then the pacing again, from there.
    for (let i = 0; i < 20; i++) {
      t.clock.advance(250);
      await round();
    }
    expect(placed.length - stalledFrom).toBe(5 + 10);

    // Over any minute: at most the pacing and the one burst (120 + 4 + 1).
    for (const from of placed)
      expect(placed.filter((at) => at >= from && at < from + 60_000).length).toBeLessThanOrEqual(125);
    expect(warnings).toEqual([]);
  });

  it('keeps a pacing that does not divide a minute (7 a minute) in whole milliseconds', async () => {
    await runningCampaign(20, 7);
    const { dialer, placed, warnings } = countingDialer('instance_a', {});
    for (let s = 0; s <= 70; s++) {
      await dialer.round();
      await dialer.settled();
      if (s < 70) t.clock.advance(1000);
    }
    // Slots at 0, 8.572 s, …, 68.576 s: 9 in 70 s.
    expect(warnings).toEqual([]);
    expect(placed).toHaveLength(9);
    const row = await t.database.db.selectFrom('campaigns').select('next_dial_at').executeTakeFirstOrThrow();
    expect(Number.isInteger(Number(row.next_dial_at))).toBe(true);
  });
});
