// /console/campaigns in headless Chromium: the account's campaigns listed with
// their progress, and a running one followed live (campaign_status events)
// until it completes. No CSP violation; the screenshot is looked at by a
// person (UPDATE_SCREENSHOTS=1 writes the guide's into docs/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.js';
import { type Browser, chromium } from '../../support/chromium.js';
import { callConfig } from '../calls/support.js';
import { caller, createCampaign, post, untilNoneCalling } from '../campaigns/support.js';
import { consoleBrowser, cspViolations, listeningApp, onPhoneScreen, screenshotDir, signIn } from './page-support.js';

describe.runIf(chromium)('the campaigns page in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-console-campaigns-'));
    t = await listeningApp({ config: callConfig() });
    browser = await consoleBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const rows = () =>
    browser.evaluate<Array<{ id: string; status: string; progress: string; counts: string }>>(`
      return [...document.querySelectorAll('[data-testid=campaign-row]')].map((row) => ({
        id: row.dataset.campaignId,
        status: row.querySelector('[data-testid=campaign-status]').textContent,
        progress: row.querySelector('[data-testid=campaign-progress]').textContent.trim(),
        counts: row.querySelector('[data-testid=campaign-counts]').textContent,
      }));
    `);

  it('lists the campaigns with their progress and follows a running one to its end', async () => {
    const c = await caller(t);
    const draft = await createCampaign(t, c, {
      name: 'January recalls',
      contacts: [{ name: 'A', phone: '+14155550131' }],
    });
    const id = await createCampaign(t, c, {
      name: 'December reminders',
      contacts: [
        { name: 'Grace', phone: '+14155550123' },
        { name: 'Alan', phone: '+14155550000' },
        { name: 'Ada', phone: '+14155550002' },
      ],
      retry: { maxAttempts: 1 },
      pacing: { callsPerMinute: 600 },
    });
    expect((await post(t, c.user, `/api/campaigns/${id}/start`)).statusCode).toBe(200);

    await signIn(browser, `${t.config.publicUrl}/console/campaigns`, c.user);
    const before = await rows();
    expect(before.map((r) => [r.id, r.status, r.progress])).toEqual([
      [id, 'running', '0 of 3'],
      [draft, 'draft', '0 of 1'],
    ]);

    // The dialer rounds (this test app's clock is a manual one), while the page listens.
    for (let i = 0; i < 5; i++) {
      await t.services.campaigns.dialer.round();
      await t.services.campaigns.dialer.settled();
      await untilNoneCalling(t);
      t.clock.advance(200);
    }
    await browser.waitFor(
      "document.querySelector('[data-testid=campaign-status]').textContent === 'completed'",
      15_000,
      'the campaign to complete on the page',
    );
    const after = await rows();
    expect(after[0]).toMatchObject({
      status: 'completed',
      progress: '3 of 3',
      counts: '1 completed · 1 no answer · 1 busy',
    });
    expect(await cspViolations(browser)).toEqual([]);
    await browser.screenshot(join(screenshotDir(dir), 'console-campaigns.png'), 1200, 500);
    await onPhoneScreen(browser, async () => {
      await browser.screenshot(join(dir, 'console-campaigns-phone.png'), 375, 740);
    });
  });
});
