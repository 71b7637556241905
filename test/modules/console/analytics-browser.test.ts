// /console/analytics and the call page's analysis in headless Chromium: an
// account with 300 calls over 30 days of several outcomes (call rows as the
// calls and analysis services leave them), its charts drawn by the vendored
// uPlot with the numbers of GET /api/analytics/calls, the filters by agent,
// campaign and dates; and a call analysed by the sandbox analyser through the
// real path, its analysis, tasks and collected fields on its page. No CSP
// violation on either page. Screenshots are written for a person to look at
// (UPDATE_SCREENSHOTS=1 writes them into docs/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/lib/ids.js';
import { tallyOf } from '../../../src/modules/analysis/tally.js';
import { ManualClock } from '../../../src/lib/clock.js';
import type { TestApp } from '../../support/app.js';
import { type Browser, chromium } from '../../support/chromium.js';
import { type TestUser, createVerifiedUser } from '../../support/factories.js';
import { callConfig } from '../calls/support.js';
import { analysedCall, endedCall } from '../analysis/support.js';
import { consoleBrowser, cspViolations, listeningApp, screenshotDir, signIn } from './page-support.js';

const DAY_MS = 86_400_000;

/** A deterministic spread of outcomes, agents and figures: call i of 300. */
function callRow(user: TestUser, i: number, start: number) {
  const at = start + Math.floor((i * 29 * DAY_MS) / 300) + (i % 7) * 3600_000;
  const kind = i % 10;
  const outcome =
    kind < 5
      ? 'completed'
      : kind < 7
        ? 'voicemail'
        : kind === 7
          ? 'transferred'
          : kind === 8
            ? 'no_answer'
            : 'provider_error';
  const status = outcome === 'no_answer' ? 'no_answer' : outcome === 'provider_error' ? 'failed' : 'completed';
  const talked = outcome === 'completed' || outcome === 'transferred';
  return {
    id: newId(at),
    user_id: user.id,
    direction: i % 4 === 0 ? 'inbound' : 'outbound',
    status,
    webhook_url: null,
    summary: JSON.stringify({ agent: { name: i % 3 === 0 ? 'Bea' : 'Amy' } }),
    provider_call_id: null,
    duration_seconds: talked ? 40 + (i % 90) : outcome === 'voicemail' ? 25 : 0,
    finished_at: at + 60_000,
    record_object_id: null,
    outcome,
    answered_at: status === 'completed' ? at + 5000 : null,
    agent_id: i % 3 === 0 ? 'Bea' : 'Amy',
    campaign_id: i % 5 === 0 ? 'spring-promo' : null,
    success: talked ? (i % 3 === 1 ? 0 : 1) : status === 'completed' ? 0 : null,
    cost_cents: status === 'completed' ? 2 + (i % 9) : 0,
    latency_p50_ms: talked ? 480 + ((i * 37) % 300) : null,
    latency_p95_ms: talked ? 800 + ((i * 53) % 700) : null,
    analysis_status: talked ? 'completed' : 'skipped',
    created_at: at,
    updated_at: at + 60_000,
  };
}

/** The row with its tally, as the analysis job writes it. */
function tallied<R extends { status: string; outcome: string; answered_at: number | null; success: number | null }>(
  row: R,
) {
  return {
    ...row,
    tally: tallyOf({
      status: row.status,
      outcome: row.outcome,
      answeredAt: row.answered_at,
      ended: true,
      success: row.success === null ? null : row.success === 1,
    }),
  };
}

describe.runIf(chromium)('the analytics page and a call analysis in Chromium', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let user: TestUser;
  let dir: string;
  let analysedId: string;
  const today = new Date().toISOString().slice(0, 10);
  const firstDay = new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-console-analytics-'));
    t = await listeningApp({ config: callConfig(), clock: new ManualClock(Date.now()) });
    t.services.platform.jobs.start();
    origin = t.config.publicUrl;
    user = await createVerifiedUser(t);
    const start = Date.parse(`${firstDay}T00:00:00Z`);
    const rows = Array.from({ length: 300 }, (_, i) => tallied(callRow(user, i, start)));
    for (let i = 0; i < rows.length; i += 100)
      await t.database.db
        .insertInto('call_sessions')
        .values(rows.slice(i, i + 100))
        .execute();
    analysedId = await endedCall(t, user, {
      agent: {
        name: 'Amy',
        analysis: {
          successCriteria: 'The caller booked a meeting',
          schema: { type: 'object', properties: { preferred_day: { type: 'string', format: 'date' } } },
        },
      },
      transcript: [
        { role: 'agent', text: 'Hello Grace, this is Amy from the clinic.' },
        { role: 'caller', text: 'Can you tell me your opening hours please?' },
        { role: 'agent', text: 'We are open Monday to Friday from nine to five.' },
        { role: 'caller', text: 'I would like to book a meeting for next Tuesday.' },
        { role: 'agent', text: "Sorry, I can't book meetings on this call." },
        { role: 'caller', text: 'Thank you, goodbye.' },
      ],
    });
    await analysedCall(t, user, analysedId);
    browser = await consoleBrowser();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const readCharts = () =>
    browser.evaluate<Array<{ chart: string; points: number; series: string; values: unknown[][]; canvas: boolean }>>(`
      return [...document.querySelectorAll('[data-testid=analytics-chart]')].map((c) => ({
        chart: c.dataset.chart, points: Number(c.dataset.points), series: c.dataset.series,
        values: JSON.parse(c.dataset.values), canvas: Boolean(c.querySelector('canvas')),
      }));
    `);

  it('draws four charts of the last 30 days with the numbers of the analytics route', async () => {
    await signIn(browser, `${origin}/console/analytics`, user);
    const charts = await readCharts();
    expect(charts.map((c) => c.chart)).toEqual(['outcomes', 'success', 'cost', 'latency']);
    expect(charts.every((c) => c.canvas && c.points === 30)).toBe(true);
    expect(charts[0]!.series).toBe('other,failed,voicemail,transferred,completed');
    const tz = await browser.evaluate<string>('return Intl.DateTimeFormat().resolvedOptions().timeZone;');
    const api = (
      await t.app.inject({
        method: 'GET',
        url: `/api/analytics/calls?from=${firstDay}&to=${today}&tz=${encodeURIComponent(tz)}`,
        headers: { authorization: `Bearer ${user.token}` },
      })
    ).json();
    expect(api.totals.calls).toBe(301);
    // The top of each day's stack is its calls; the cost and latency lines are the route's.
    expect(charts[0]!.values[0]).toEqual(api.buckets.map((b: { calls: number }) => b.calls));
    expect(charts[2]!.values[0]).toEqual(api.buckets.map((b: { costUsd: number }) => b.costUsd));
    expect(charts[3]!.values).toEqual([
      api.buckets.map((b: { latencyP50Ms: number | null }) => b.latencyP50Ms),
      api.buckets.map((b: { latencyP95Ms: number | null }) => b.latencyP95Ms),
    ]);
    const totals = await browser.evaluate<string>(
      "return document.querySelector('[data-testid=analytics-totals]').textContent;",
    );
    expect(totals).toContain('Calls301');
    // The screen takes the screenshot's size first; the charts follow their figures' new width (ResizeObserver), then the picture.
    await browser.send('Emulation.setDeviceMetricsOverride', {
      width: 1280,
      height: 1100,
      deviceScaleFactor: 1,
      mobile: false,
    });
    await browser.waitFor(
      "[...document.querySelectorAll('[data-testid=analytics-chart]')].every((c) => c.querySelector('.uplot').offsetWidth <= c.parentElement.clientWidth)",
      5000,
      'the charts to fit their boxes',
    );
    await browser.screenshot(join(screenshotDir(dir), 'console-analytics.png'), 1280, 1100);
    expect(await cspViolations(browser)).toEqual([]);
  });

  it('filters by agent, campaign and dates', async () => {
    const agents = await browser.evaluate<string[]>(
      "return [...document.querySelectorAll('[data-testid=filter-agent] option')].map((o) => o.value);",
    );
    expect(agents).toEqual(['', 'Amy', 'Bea']);
    const campaigns = await browser.evaluate<string[]>(
      "return [...document.querySelectorAll('[data-testid=filter-campaign] option')].map((o) => o.value);",
    );
    expect(campaigns).toEqual(['', 'spring-promo']);
    const apply = async (script: string) => {
      await browser.evaluate(`${script}; document.querySelector('[data-testid=filter-apply]').click();`);
      await browser.waitFor("document.getElementById('content').dataset.ready === 'pending'", 5000).catch(() => {});
      await browser.waitFor("document.getElementById('content').dataset.ready === 'true'", 10_000);
    };
    const calls = async () => {
      const charts = await readCharts();
      return (charts[0]!.values[0] as number[]).reduce((a, b) => a + b, 0);
    };
    await apply("document.querySelector('[data-testid=filter-agent]').value = 'Bea'");
    expect(await calls()).toBe(100);
    await apply(
      "document.querySelector('[data-testid=filter-agent]').value = ''; document.querySelector('[data-testid=filter-campaign]').value = 'spring-promo'",
    );
    expect(await calls()).toBe(60);
    await apply(
      `document.querySelector('[data-testid=filter-campaign]').value = ''; document.querySelector('[data-testid=filter-from]').value = ${JSON.stringify(today)}`,
    );
    const charts = await readCharts();
    expect(charts[0]!.points).toBe(1);
  });

  it("shows the call's analysis, its tasks and its collected fields on the call page", async () => {
    // Signed in already (the session cookie of the first test).
    await browser.open(
      `${origin}/console/calls/${analysedId}`,
      "document.getElementById('content').dataset.ready === 'true'",
    );
    await browser.waitFor(
      "document.querySelector('[data-testid=analysis]').dataset.status === 'completed'",
      15_000,
      'the analysis',
    );
    const shown = await browser.evaluate<{ summary: string; data: string; tasks: string[]; success: string }>(`
      const a = document.querySelector('[data-testid=analysis]');
      return {
        summary: a.querySelector('[data-testid=analysis-summary]').textContent,
        data: a.querySelector('[data-testid=analysis-data]').textContent,
        tasks: [...a.querySelectorAll('[data-testid=analysis-tasks] li')].map((li) => li.textContent),
        success: a.dataset.success,
      };
    `);
    expect(shown.success).toBe('false');
    expect(shown.summary).toContain('asked "Can you tell me your opening hours please?" (answered)');
    expect(shown.summary).toContain('asked for a meeting (not booked)');
    expect(shown.data).toMatch(/preferred_day\d{4}-\d{2}-\d{2}/);
    expect(shown.tasks).toHaveLength(1);
    expect(shown.tasks[0]).toMatch(/^Book a meeting with Gracedue \d{4}-\d{2}-\d{2}$/);
    await browser.screenshot(join(screenshotDir(dir), 'console-call-analysis.png'), 1280, 1400);
    expect(await cspViolations(browser)).toEqual([]);
  });
});
