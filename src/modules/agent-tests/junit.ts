// A run as a JUnit XML report (the format every CI reads): one testsuite, a
// testcase per test, a <failure> listing each failed check with its expected
// and actual value, an <error> for a test that could not run.
import type { TestRun } from './schemas.js';

const escape = (text: string) =>
  text
    // XML 1.0 allows no control characters but tab, newline and carriage return.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : JSON.stringify(value ?? null));

export function junitReport(run: TestRun): string {
  const { summary } = run;
  const seconds = (ms: number | null) => ((ms ?? 0) / 1000).toFixed(3);
  const total = run.results.reduce((sum, r) => sum + (r.durationMs ?? 0), 0);
  const cases = run.results.map((r) => {
    const open = `  <testcase classname="agent-tests" name="${escape(r.name)}" time="${seconds(r.durationMs)}">`;
    const failed = r.checks.filter((c) => !c.passed);
    const transcript = r.transcript.map((l) => `${l.role}: ${l.text}`).join('\n');
    const out = transcript ? `\n    <system-out>${escape(transcript)}</system-out>` : '';
    if (r.status === 'error')
      return `${open}\n    <error message="${escape(r.error ?? 'the test could not run')}"/>${out}\n  </testcase>`;
    if (r.status === 'failed') {
      const lines = failed.map((c) => `${c.name}: expected ${show(c.expected)}, actual ${show(c.actual)}`);
      const message = `${failed.length} of ${r.checks.length} checks failed: ${failed.map((c) => c.name).join(', ')}`;
      return `${open}\n    <failure message="${escape(message)}" type="expectation">${escape(lines.join('\n'))}</failure>${out}\n  </testcase>`;
    }
    if (r.status === 'queued' || r.status === 'running')
      return `${open}\n    <skipped message="${r.status}"/>\n  </testcase>`;
    return `${open}${out}\n  </testcase>`;
  });
  const skipped = run.results.filter((r) => r.status === 'queued' || r.status === 'running').length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="agent-tests" tests="${summary.total}" failures="${summary.failed}" errors="${summary.error}" time="${seconds(total)}">`,
    `<testsuite name="agent-tests" id="${escape(run.runId)}" tests="${summary.total}" failures="${summary.failed}" errors="${summary.error}" skipped="${skipped}" time="${seconds(total)}" timestamp="${run.createdAt}">`,
    ...cases,
    '</testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
