// What the console's Chromium tests share: an app listening on a real port,
// a browser that collects the page's Content-Security-Policy violations,
// signing in through a page's form, typing as a keyboard does, where
// screenshots go, and a phone-sized screen.
import { join } from 'node:path';
import { type TestApp, type TestAppOptions, createTestApp } from '../../support/app.js';
import { Browser, chromium } from '../../support/chromium.js';
import { freePort } from '../../support/ports.js';

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

/** A test app listening on a free port of 127.0.0.1 (its PUBLIC_URL names that port unless `env` sets one). */
export async function listeningApp(options: TestAppOptions = {}): Promise<TestApp> {
  const port = await freePort();
  const t = await createTestApp({ ...options, env: { PORT: String(port), ...options.env } });
  await t.app.listen({ port, host: '127.0.0.1' });
  return t;
}

/** Headless Chromium (with `args`, e.g. a fake microphone) collecting every page's CSP violations. */
export async function consoleBrowser(args: string[] = []): Promise<Browser> {
  const browser = await Browser.launch(chromium!, args);
  await browser.beforeEachDocument(COLLECT_CSP_VIOLATIONS);
  return browser;
}

/** Types into the focused element, as a keyboard does. */
export async function type(browser: Browser, text: string): Promise<void> {
  await browser.send('Input.insertText', { text });
}

export async function press(browser: Browser, key: 'Tab' | 'Enter'): Promise<void> {
  const code = key === 'Tab' ? 9 : 13;
  const enter = key === 'Enter' ? { text: '\r' } : {};
  await browser.send('Input.dispatchKeyEvent', {
    type: 'rawKeyDown',
    key,
    code: key,
    windowsVirtualKeyCode: code,
    ...enter,
  });
  if (key === 'Enter')
    await browser.send('Input.dispatchKeyEvent', {
      type: 'char',
      key,
      code: key,
      windowsVirtualKeyCode: code,
      ...enter,
    });
  await browser.send('Input.dispatchKeyEvent', { type: 'keyUp', key, code: key, windowsVirtualKeyCode: code });
}

/**
 * Opens `url` (a console page, signed out) and signs in as `user` through the
 * page's own form, then waits for the page's content to be ready. By default
 * the fields are filled and the button clicked; `keyboard` signs in with the
 * keyboard alone, as a person would: the email field has focus, Tab to the
 * password, Enter.
 */
export async function signIn(
  browser: Browser,
  url: string,
  user: { email: string; password: string },
  options: { keyboard?: boolean } = {},
): Promise<void> {
  const form = "!document.getElementById('sign-in-panel').hidden";
  if (options.keyboard) {
    await browser.open(url, `${form} && document.activeElement?.id === 'email'`);
    await type(browser, user.email);
    await press(browser, 'Tab');
    await type(browser, user.password);
    await press(browser, 'Enter');
  } else {
    await browser.open(url, form);
    await browser.evaluate(`
      document.querySelector('[data-testid=email]').value = ${JSON.stringify(user.email)};
      document.querySelector('[data-testid=password]').value = ${JSON.stringify(user.password)};
      document.querySelector('[data-testid=sign-in]').click();
    `);
  }
  await browser.waitFor("document.getElementById('content').dataset.ready === 'true'", 15_000, `${url} signed in`);
}

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
