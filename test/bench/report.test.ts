// BENCHMARKS.md's header names a run limited by --only, so a subset (a profiles run, say) is not read as a full run.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Results, renderMarkdown } from '../../bench/lib/report.js';

const latest = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../bench/results/latest.json'), 'utf8'),
) as Results;
const header = (markdown: string) => markdown.split('\n').find((line) => line.startsWith('Run: '))!;

describe('BENCHMARKS.md header', () => {
  it('names the scenarios of a run limited by --only, and nothing for a whole run', () => {
    expect(header(renderMarkdown({ ...latest, only: undefined }))).not.toContain('only');
    expect(header(renderMarkdown({ ...latest, only: ['profiles'] }))).toContain(
      `mode **${latest.mode}** · **only profiles** (`,
    );
  });
});
