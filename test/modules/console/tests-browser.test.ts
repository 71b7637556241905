// /console/tests in headless Chromium (DESIGN.md "Agent tests"): the tests
// listed with their last result, the run button running them all and the page
// following the run to its end, a failed check shown expected against actual.
// No CSP violation; the screenshots are looked at by a person
// (UPDATE_SCREENSHOTS=1 writes the guide's into docs/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.js';
import { type Browser, chromium } from '../../support/chromium.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { consoleBrowser, cspViolations, listeningApp, onPhoneScreen, screenshotDir, signIn } from './page-support.js';

const amy = { name: 'Amy', firstMessage: 'Hello, this is Amy from the clinic. How can I help?' };

describe.runIf(chromium)('the agent tests page in Chromium', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let user: TestUser;
  let dir: string;
  const ids: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-console-tests-'));
    t = await listeningApp();
    origin = t.config.publicUrl;
    user = await createVerifiedUser(t);
    for (const body of [
      {
        name: 'Greets as Amy',
        agent: amy,
        caller: { lines: ['Hello, who is this?'] },
        expect: { says: ['this is Amy'] },
      },
      {
        name: 'Ends the call on goodbye',
        agent: amy,
        caller: { lines: ['Goodbye'] },
        expect: { outcome: 'completed', toolCalls: [{ name: 'end_call' }] },
      },
      {
        name: 'Books a meeting',
        agent: amy,
        caller: { lines: ['I would like to book a meeting next Tuesday'] },
        expect: { toolCalls: [{ name: 'book_meeting' }], neverSays: ["can't book"] },
      },
    ]) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/agent-tests',
        headers: bearer(user.token),
        payload: body,
      });
      ids.push(res.json().id);
    }
    browser = await consoleBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rows = () =>
    browser.evaluate<Array<{ id: string; status: string; cells: string[]; checks: string[] }>>(`
      return [...document.querySelectorAll('[data-testid=test-row]')].map((row) => ({
        id: row.dataset.testId,
        status: row.querySelector('[data-testid=test-status]').textContent,
        cells: [...row.cells].map((c) => c.textContent),
        checks: [...row.querySelectorAll('[data-testid=failed-check]')].map((li) => li.textContent),
      }));
    `);

  it('lists the tests not run yet, runs them all with the button, and shows the failed checks expected against actual', async () => {
    await signIn(browser, `${origin}/console/tests`, user);
    const before = await rows();
    expect(before.map((r) => [r.id, r.status])).toEqual(ids.map((id) => [id, 'not run']));
    expect(before[0]!.cells.slice(0, 3)).toEqual(['Greets as Amy', 'Amy', '1 line: "Hello, who is this?"']);

    await browser.evaluate("document.querySelector('[data-testid=run-tests]').click();");
    await browser.waitFor(
      "[...document.querySelectorAll('[data-testid=test-status]')].every((s) => s.textContent !== 'not run')",
      20_000,
      'the run to end',
    );
    const after = await rows();
    expect(after.map((r) => r.status)).toEqual(['passed', 'passed', 'failed']);
    expect(await browser.evaluate<string>("return document.getElementById('run-state').textContent;")).toBe(
      'Run failed: 2 of 3 passed, 1 failed, 0 could not run.',
    );
    const failed = after[2]!.checks;
    expect(failed).toHaveLength(2);
    expect(failed[0]).toBe('toolCalls[0]expected {"name":"book_meeting"}actual []');
    expect(failed[1]).toMatch(
      /^neverSays\[0\]expected never "can't book"actual I'm sorry, I can't book meetings on this call/,
    );
    expect(await cspViolations(browser)).toEqual([]);
    await browser.screenshot(join(screenshotDir(dir), 'console-tests.png'), 1200, 700);
    await onPhoneScreen(browser, async () => {
      await browser.screenshot(join(dir, 'console-tests-phone.png'), 375, 740);
    });
  });
});
