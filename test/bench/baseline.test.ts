// The benchmark's regression guard (issue 26): CPU µs per request against the
// last accepted figures in bench/baseline.json.
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acceptBaseline, baselineChecks, readBaseline } from '../../bench/lib/baseline.js';
import type { LoadFigures, Results } from '../../bench/lib/report.js';

const figures = (rps: number, serverCpuPct: number): LoadFigures => ({ rps, p50: 1, p99: 5, errors: 0, serverCpuPct });
function run(readCpuPct: number, commit = 'abc1234', floorCpuPct = 60): Results {
  return {
    date: '2026-11-26T04:00:00.000Z',
    code: { commit, changedSrcFiles: 0 },
    mode: 'quick',
    objects: [
      {
        backend: 'sqlite',
        scenario: 'GET /api/objects/{id} (JWT)',
        figures: figures(10_000, readCpuPct),
        floor: figures(12_000, floorCpuPct),
        ratio: 0.83,
      },
      {
        backend: 'postgres',
        scenario: 'PUT /api/objects (1 KiB, API key)',
        figures: figures(4_000, 80),
        floor: figures(8_000, 90),
        ratio: 0.5,
        pgFloor: figures(5_000, 60),
        pgRatio: 0.8,
      },
    ],
  } as unknown as Results;
}

describe('bench regression guard', () => {
  it('accepts a run as the baseline, passes a run within 10% of its floor ratio and flags one more than 10% above, naming the scenario', () => {
    const root = mkdtempSync(join(tmpdir(), 'baseline-'));
    mkdirSync(join(root, 'bench'));
    expect(readBaseline(root).scenarios).toEqual({});
    expect(baselineChecks(run(50), readBaseline(root)).checks).toEqual([]); // nothing accepted yet: nothing to compare

    acceptBaseline(root, run(50)); // 50 µs per read (the floor: 50), 200 µs per create; PostgreSQL's floor is its own
    const saved = JSON.parse(readFileSync(join(root, 'bench', 'baseline.json'), 'utf8'));
    expect(saved.scenarios['sqlite: GET /api/objects/{id} (JWT)']).toMatchObject({
      cpuUsPerRequest: 50,
      floorCpuUsPerRequest: 50,
      commit: 'abc1234',
    });
    expect(saved.scenarios['postgres: PUT /api/objects (1 KiB, API key)']).toMatchObject({
      cpuUsPerRequest: 200,
      floorCpuUsPerRequest: 120,
    });

    const within = baselineChecks(run(55), readBaseline(root)); // +10% against the same floor: still accepted
    expect(within.regressions).toEqual([]);
    expect(within.checks.every((c) => c.met)).toBe(true);

    const worse = baselineChecks(run(56), readBaseline(root)); // +12% against the same floor
    expect(worse.regressions).toHaveLength(1);
    expect(worse.regressions[0]).toMatch(
      /^sqlite: GET \/api\/objects\/\{id\} \(JWT\): \+12% against the floor over the accepted baseline \(commit abc1234/,
    );
    expect(worse.regressions[0]).toMatch(
      /56 µs, 1\.12× the floor's 50 µs, vs 1\.00× then \(\+12% against the floor; \+12% absolute\)$/,
    );
    expect(worse.checks.find((c) => c.name.startsWith('sqlite'))?.met).toBe(false);

    // A slower machine: the floor rose by as much as ours (+32% absolute, +2% against the floor): not a regression.
    const slower = baselineChecks(run(66, 'abc1234', 78), readBaseline(root));
    expect(slower.regressions).toEqual([]);
    expect(slower.checks.find((c) => c.name.startsWith('sqlite'))?.value).toMatch(
      /\+2% against the floor; \+32% absolute/,
    );
    // A faster machine under a costlier server: absolute µs the same, the floor fell: a regression.
    const costlier = baselineChecks(run(50, 'abc1234', 48), readBaseline(root)); // floor 40 µs, ours 50: 1.25×
    expect(costlier.regressions).toHaveLength(1);
    expect(costlier.regressions[0]).toMatch(/\+25% against the floor/);

    acceptBaseline(root, run(56, 'def5678')); // accepting moves the mark
    expect(baselineChecks(run(56), readBaseline(root)).regressions).toEqual([]);
  });

  it('judges on absolute µs when a run has no floor figure', () => {
    const root = mkdtempSync(join(tmpdir(), 'baseline-'));
    mkdirSync(join(root, 'bench'));
    acceptBaseline(root, run(50));
    const noFloor = run(56);
    (noFloor.objects[0] as { floor: unknown }).floor = null;
    const guard = baselineChecks(noFloor, readBaseline(root));
    expect(guard.regressions).toHaveLength(1);
    expect(guard.regressions[0]).toMatch(/\+12% absolute over the accepted baseline .*no floor to compare with/);
  });
});
