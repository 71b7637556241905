import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findProfile } from '../../bench/lib/profile.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function profile(name: string, ageSeconds: number) {
  const path = join(dir, name);
  writeFileSync(path, '{}');
  const at = Date.now() / 1000 - ageSeconds;
  utimesSync(path, at, at);
}

describe('findProfile', () => {
  it("takes the newest server's main thread, not a worker thread's or an older run's", () => {
    dir = mkdtempSync(join(tmpdir(), 'profiles-'));
    profile('CPU.20261207.082451.10542.0.001.cpuprofile', 600); // an older run, first by name
    profile('CPU.20261207.145209.27174.1.002.cpuprofile', 1); // a worker thread of the newest
    profile('CPU.20261207.145209.27174.0.001.cpuprofile', 2);
    profile('CPU.20261207.145215.27174.2.003.cpuprofile', 0);
    expect(findProfile(dir)).toBe(join(dir, 'CPU.20261207.145209.27174.0.001.cpuprofile'));
  });

  it('says so when no main-thread profile was written', () => {
    dir = mkdtempSync(join(tmpdir(), 'profiles-'));
    profile('CPU.20261207.145209.27174.1.002.cpuprofile', 0);
    expect(() => findProfile(dir)).toThrow(/no main-thread \.cpuprofile/);
  });
});
