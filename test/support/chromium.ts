// Headless Chromium from the system (Debian's chromium package; .ci/run
// installs it) driven over the Chrome DevTools Protocol: launch with extra
// flags, run code in the page, navigate, take screenshots, and stop every
// process of the browser. Tests that need it run only where it is installed.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'undici';

export const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path));

/** A minimal Chrome DevTools Protocol client over the browser's page target. */
export class Browser {
  private constructor(
    private readonly process: ChildProcess,
    private readonly profile: string,
    private readonly socket: WebSocket,
  ) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as {
        id?: number;
        method?: string;
        params?: unknown;
        result?: unknown;
        error?: { message: string };
      };
      if (message.method) for (const listener of this.listeners.get(message.method) ?? []) listener(message.params);
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id!);
      if (message.error) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
  }

  private nextId = 1;
  private readonly listeners = new Map<string, Array<(params: any) => void>>();

  /** Calls `listener` with the params of every CDP event named `method` (e.g. Fetch.requestPaused). */
  on(method: string, listener: (params: any) => void): void {
    this.listeners.set(method, [...(this.listeners.get(method) ?? []), listener]);
  }
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  /** Starts Chromium headless with `extraArgs` (e.g. a fake microphone) before its blank page. */
  static async launch(binary: string, extraArgs: string[] = []): Promise<Browser> {
    const profile = mkdtempSync(join(tmpdir(), 'wsapi-chromium-'));
    const child = spawn(
      binary,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--remote-debugging-address=127.0.0.1',
        '--remote-debugging-port=0',
        `--user-data-dir=${profile}`,
        ...extraArgs,
        'about:blank',
      ],
      // Its own process group: Chromium's helpers (zygotes, renderers, the GPU,
      // network and storage services) join it, so close() can wait for all of them.
      { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
    );
    const browserUrl = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stderr!.on('data', (chunk) => {
        text += chunk;
        const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`chromium exited with ${code}: ${text}`)));
    });
    const { port } = new URL(browserUrl);
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
      type: string;
      webSocketDebuggerUrl: string;
    }>;
    const pageTarget = targets.find((t) => t.type === 'page');
    if (!pageTarget) throw new Error('chromium has no page target');
    const socket = new WebSocket(pageTarget.webSocketDebuggerUrl);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      socket.addEventListener('error', () => reject(new Error('cannot connect to chromium')));
    });
    return new Browser(child, profile, socket);
  }

  send(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    this.socket.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /** Runs an async function body in the page and returns its JSON result; `userGesture` runs it as if the user acted (a click may start audio). */
  async evaluate<T>(body: string, options: { userGesture?: boolean } = {}): Promise<T> {
    const answer = (await this.send('Runtime.evaluate', {
      expression: `(async () => { ${body} })()`,
      awaitPromise: true,
      returnByValue: true,
      userGesture: options.userGesture ?? false,
    })) as {
      result: { value?: T };
      exceptionDetails?: { exception?: { description?: string }; text: string };
    };
    if (answer.exceptionDetails)
      throw new Error(answer.exceptionDetails.exception?.description ?? answer.exceptionDetails.text);
    return answer.result.value as T;
  }

  /** Navigates to `url` and waits until the page's JavaScript expression `ready` is true. */
  async open(url: string, ready: string): Promise<void> {
    await this.send('Page.navigate', { url });
    await this.waitFor(ready, 15_000, `${url}: ${ready}`);
  }

  /** Waits until the page's JavaScript expression is truthy (evaluated every 50 ms; a page being replaced counts as not yet). */
  async waitFor(expression: string, timeoutMs: number, what = expression): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.evaluate<boolean>(`return Boolean(${expression});`).catch(() => false);
      if (value) return;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Runs `source` in every document before its own scripts (e.g. to collect CSP violations). */
  async beforeEachDocument(source: string): Promise<void> {
    await this.send('Page.enable');
    await this.send('Page.addScriptToEvaluateOnNewDocument', { source });
  }

  /** A PNG of the page at `width`×`height` CSS pixels, written to `path`. */
  async screenshot(path: string, width: number, height: number): Promise<void> {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png', captureBeyondViewport: false })) as {
      data: string;
    };
    writeFileSync(path, Buffer.from(data, 'base64'));
  }

  /**
   * Stops Chromium, then removes its profile. The browser process exiting is
   * not enough: its helper processes (the storage service among them) can
   * still be writing into the profile for a moment, and removing it then fails
   * with ENOTEMPTY. So the whole process group is stopped and waited for.
   */
  async close(): Promise<void> {
    this.socket.close();
    const group = this.process.pid!;
    const running = () => {
      try {
        process.kill(-group, 0);
        return true;
      } catch {
        return false; // ESRCH: nobody is left in the group
      }
    };
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-group, name);
      } catch {
        // the group is already gone
      }
    };
    const exited =
      this.process.exitCode !== null || this.process.signalCode !== null
        ? Promise.resolve()
        : new Promise((resolve) => this.process.once('exit', resolve));
    signal('SIGTERM');
    await exited;
    // Bounded: after 10 s whatever is left is killed outright.
    for (let waited = 0; running(); waited += 20) {
      if (waited === 10_000) signal('SIGKILL');
      if (waited > 20_000) throw new Error(`chromium's process group ${group} did not exit`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}
