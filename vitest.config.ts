import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
// @ts-expect-error: plain JavaScript, no declarations (.ci/test-files.mjs also runs as a script)
import { LONGEST_FIRST, isolatedFiles } from './.ci/test-files.mjs';

// Two projects over the same files: most share their worker's modules (isolate: false: each of vitest's
// workers loads the app once, not once per file; every file still builds its own app and database, closes
// what it opens and restores its spies); the real-time calls and the files marked `test-files: isolate`
// (.ci/test-files.mjs --isolated) run each in a fresh process.
const isolated: string[] = isolatedFiles();
const longest: string[] = LONGEST_FIRST;

/** vitest's order (by project, then by the last run's timings or by size), with LONGEST_FIRST first in each project. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projects = [...new Set(sorted.map((f) => f.project.name))];
    const rank = (f: TestSpecification) => {
      const i = longest.indexOf(relative(f.project.config.root, f.moduleId));
      return i < 0 ? longest.length : i;
    };
    return sorted
      .map((file, index) => ({ file, index }))
      .sort(
        (a, b) =>
          projects.indexOf(a.file.project.name) - projects.indexOf(b.file.project.name) ||
          rank(a.file) - rank(b.file) ||
          a.index - b.index,
      )
      .map(({ file }) => file);
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    // No maxWorkers here: a project inherits the file's value over the command line's, so `--maxWorkers=13` of
    // the real-time calls ran them two at a time (CI, 7 Dec: 593 s instead of about 300). npm test and .ci/run
    // say how many for each group; a plain `vitest run` takes vitest's default.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: isolated, isolate: false } },
      { extends: true, test: { name: 'isolated', include: isolated } },
    ],
  },
});
