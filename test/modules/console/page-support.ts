// What the console's Chromium tests share: where screenshots go, collecting a
// page's Content-Security-Policy violations, and a phone-sized screen.
import { join } from 'node:path';
import type { Browser } from '../../support/chromium.js';

/** The docs' screenshots are rewritten only on request (UPDATE_SCREENSHOTS=1); otherwise they go to `dir`, a temporary folder. */
export const screenshotDir = (dir: string) =>
  process.env.UPDATE_SCREENSHOTS === '1' ? join(process.cwd(), 'docs') : dir;

/** Collects the page's CSP violations in window.__cspViolations, before any of its scripts run (Browser.beforeEachDocument). */
export const COLLECT_CSP_VIOLATIONS = `
  window.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));
`;

/** The violations collected on the current page. */
export const cspViolations = (browser: Browser) => browser.evaluate<string[]>('return window.__cspViolations;');

/** Runs `check` with the page emulating a 375 x 740 phone screen, then restores the screen. */
export async function onPhoneScreen(browser: Browser, check: () => Promise<void>): Promise<void> {
  await browser.send('Emulation.setDeviceMetricsOverride', {
    width: 375,
    height: 740,
    deviceScaleFactor: 2,
    mobile: true,
  });
  try {
    await check();
  } finally {
    await browser.send('Emulation.clearDeviceMetricsOverride');
  }
}
