// The console in headless Chromium (DESIGN.md "Calls from a browser and the
// console"), driven as a person would: typing and pressing keys and buttons.
// First on calls already in the account: sign in, the agent picker opens the
// encrypted agents store, the call list and a call page with its transcript,
// tool calls, latency per turn and a recording that plays. Then a web call
// with a fake microphone fed from a WAV file spoken by flite: the caller asks
// for the opening hours, the agent answers from its knowledge base and the
// page plays the answer; the call page then shows it all. Every page is
// checked for Content-Security-Policy violations. Runs where Chromium is
// installed (.ci/run installs it, with flite).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket as WsSocket, WebSocketServer } from 'ws';
import { encodeWav } from '../../../src/lib/audio.js';
import { installedCallerSynthesizers } from '../../../src/providers/call-speech/offline-caller.js';
import type { TestApp } from '../../support/app.js';
import { type Browser, chromium } from '../../support/chromium.js';
import { type TestUser, bearer, createVerifiedUser } from '../../support/factories.js';
import { multipartForm } from '../../support/multipart.js';
import { until } from '../../support/voice-audio.js';
import { parseWav } from '../../support/wav.js';
import { within } from '../../sdk/support.js';
import { freePort } from '../../support/ports.js';
import { consoleBrowser, cspViolations, listeningApp, onPhoneScreen, screenshotDir, signIn } from './page-support.js';
import { WallClock, seedCall, seededToolCalls, seededTranscript, stereoWav } from './support.js';

const hasFlite = installedCallerSynthesizers().includes('flite');

async function knowledgeBase(t: TestApp, user: TestUser): Promise<string> {
  const kb = (
    await t.app.inject({
      method: 'PUT',
      url: '/api/knowledge-bases',
      headers: bearer(user.token),
      payload: { name: 'Clinic' },
    })
  ).json();
  const form = multipartForm([
    {
      filename: 'hours.txt',
      content: 'Opening hours: we are open Monday to Friday from nine to five.',
      contentType: 'text/plain',
    },
  ]);
  const upload = await t.app.inject({
    method: 'POST',
    url: `/api/knowledge-bases/${kb.id}`,
    headers: { ...bearer(user.token), ...form.headers },
    payload: form.payload,
  });
  expect(upload.statusCode, upload.body).toBe(200);
  return kb.id as string;
}

/** An agent record in the user's encrypted agents store, written as the SDK writes one. */
async function agent(t: TestApp, user: TestUser, record: Record<string, unknown>): Promise<string> {
  return (await t.services.data.records.create(user.id, 'agents', Buffer.from(JSON.stringify(record), 'utf8'))).id;
}

describe.runIf(chromium)('the console in Chromium, on calls already in the account', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let user: TestUser;
  let kbAgent: string;
  let recorded: string;

  beforeAll(async () => {
    t = await listeningApp();
    origin = t.config.publicUrl;
    user = await createVerifiedUser(t);
    const kbId = await knowledgeBase(t, user);
    kbAgent = await agent(t, user, {
      name: 'Amy',
      prompt: 'Answer questions about the clinic.',
      knowledgeBaseId: kbId,
    });
    await agent(t, user, { name: 'Bob', prompt: 'Say hello.' });
    await seedCall(t, user, {
      from: '+14155550100',
      to: '+14155550123',
      durationSeconds: 75,
      chargedCents: 4,
      startedAt: Date.now() - 120_000,
    });
    recorded = await seedCall(t, user, {
      direction: 'web',
      durationSeconds: 12,
      transcript: seededTranscript,
      toolCalls: seededToolCalls,
      recording: stereoWav(2),
      startedAt: Date.now() - 60_000,
    });
    browser = await consoleBrowser(['--autoplay-policy=user-gesture-required']);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('refuses a wrong password with a message, then signs in with the keyboard and lists the agents from the encrypted store', async () => {
    await browser.open(`${origin}/console`, "!document.getElementById('sign-in-panel').hidden");
    const refused = await browser.evaluate<string>(`
      document.querySelector('[data-testid=email]').value = ${JSON.stringify(user.email)};
      document.querySelector('[data-testid=password]').value = 'not the password';
      document.querySelector('[data-testid=sign-in]').click();
      const error = document.getElementById('sign-in-error');
      while (!error.textContent) await new Promise((r) => setTimeout(r, 20));
      return error.textContent;
    `);
    expect(refused).toBe('Wrong email or password (or code).');

    await signIn(browser, `${origin}/console`, user, { keyboard: true });
    const form = await browser.evaluate<{
      agents: Array<{ value: string; text: string }>;
      selected: string;
      promptHidden: boolean;
      bases: string[];
      who: string;
    }>(`
      return {
        agents: [...document.querySelector('[data-testid=agent-select]').options].map((o) => ({ value: o.value, text: o.textContent })),
        selected: document.querySelector('[data-testid=agent-select]').value,
        promptHidden: document.getElementById('prompt-fields').hidden,
        bases: [...document.getElementById('knowledge-base').options].map((o) => o.textContent),
        who: document.getElementById('who').textContent,
      };
    `);
    expect(form.agents.map((a) => a.text)).toEqual(['Write a prompt instead', 'Amy (with a knowledge base)', 'Bob']);
    expect(form.selected).toBe(kbAgent);
    expect(form.promptHidden).toBe(true);
    expect(form.bases).toEqual(["None (or the agent's own)", 'Clinic']);
    expect(form.who).toBe(user.email);
    // Choosing "write a prompt" shows the prompt.
    const promptShown = await browser.evaluate<boolean>(`
      const select = document.querySelector('[data-testid=agent-select]');
      select.value = '';
      select.dispatchEvent(new Event('change'));
      return !document.getElementById('prompt-fields').hidden && document.querySelector('[data-testid=prompt]').offsetParent !== null;
    `);
    expect(promptShown).toBe(true);
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it('lists the calls and opens one: transcript, tool calls, latency per turn and a recording that plays', async () => {
    await browser.open(`${origin}/console/calls`, "document.getElementById('content').dataset.ready === 'true'");
    const rows = await browser.evaluate<string[][]>(`
      return [...document.querySelectorAll('[data-testid=call-list] [data-testid=call-row]')].map((row) => [...row.cells].map((c) => c.textContent));
    `);
    expect(rows).toHaveLength(2);
    expect(rows[0]!.slice(1)).toEqual(['web', 'completed', '—', '—', '0:12', 'free']);
    expect(rows[1]!.slice(1)).toEqual(['outbound', 'completed', '+14155550100', '+14155550123', '1:15', '$0.04']);

    // Follow the link, as a click does.
    await browser.evaluate(`document.querySelector('[data-call-id="${recorded}"] a').click();`);
    await browser.waitFor(
      `location.pathname === '/console/calls/${recorded}' && document.getElementById('content').dataset.ready === 'true'`,
      15_000,
      'the call page',
    );
    const page = await browser.evaluate<{
      lines: Array<{ role: string; text: string }>;
      latency: string[][];
      tools: string;
      recording: string | null;
    }>(`
      return {
        lines: [...document.querySelector('[data-testid=transcript]').children].map((li) => ({ role: li.dataset.role, text: li.textContent })),
        latency: [...document.querySelectorAll('[data-testid=latency] tbody tr')].map((row) => [...row.cells].map((c) => c.textContent)),
        tools: document.querySelector('[data-testid=tool-calls]').textContent,
        recording: document.querySelector('[data-testid=recording]').getAttribute('src'),
      };
    `);
    expect(page.lines.map((l) => l.role)).toEqual(['agent', 'caller', 'agent', 'caller', 'agent']);
    expect(page.lines[1]!.text).toContain('Can you tell me your opening hours please?');
    expect(page.lines[3]!.text).toContain('(not recognised from audio)');
    expect(page.lines[4]!.text).toContain('(interrupted: what the caller heard)');
    expect(page.latency).toEqual([
      ['1', 'We are open Monday to Friday from nine to five.', '310 ms', '420 ms', '150 ms', '12 ms', '892 ms'],
      ['2', 'Goodbye!', '280 ms', '390 ms', '140 ms', '9 ms', '819 ms'],
    ]);
    expect(page.tools).toContain('search_knowledge');
    expect(page.tools).toContain('Monday to Friday from nine to five');
    expect(page.recording).toBe(`/api/calls/${recorded}/recording`);

    // The recording plays (the request carries the session cookie): two seconds of two channels.
    const played = await browser.evaluate<{ duration: number; time: number }>(
      `
      const audio = document.querySelector('[data-testid=recording]');
      audio.muted = true;
      await audio.play();
      while (audio.currentTime < 0.3) await new Promise((r) => setTimeout(r, 20));
      audio.pause();
      return { duration: audio.duration, time: audio.currentTime };
    `,
      { userGesture: true },
    );
    expect(played.duration).toBeCloseTo(2, 1);
    expect(played.time).toBeGreaterThanOrEqual(0.3);
    expect(await cspViolations(browser)).toEqual([]);
  }, 60_000);

  it('fits a phone screen: nothing wider than 375 px on the call list and the call page', async () => {
    await onPhoneScreen(browser, async () => {
      for (const path of ['/console/calls', `/console/calls/${recorded}`, '/console']) {
        await browser.open(`${origin}${path}`, "document.getElementById('content').dataset.ready === 'true'");
        expect(
          await browser.evaluate<number>('return document.documentElement.scrollWidth;'),
          path,
        ).toBeLessThanOrEqual(375);
      }
    });
  }, 60_000);

  it('a signed-out visitor of a call page is asked to sign in, and sees the call after', async () => {
    await browser.evaluate(`await fetch('/api/auth/logout');`);
    await browser.open(`${origin}/console/calls/${recorded}`, "!document.getElementById('sign-in-panel').hidden");
    expect(await browser.evaluate<boolean>("return document.getElementById('content').hidden;")).toBe(true);
    await browser.evaluate(`
      document.querySelector('[data-testid=email]').value = ${JSON.stringify(user.email)};
      document.querySelector('[data-testid=password]').value = ${JSON.stringify(user.password)};
      document.querySelector('[data-testid=sign-in]').click();
    `);
    await browser.waitFor(
      "document.getElementById('content').dataset.ready === 'true'",
      15_000,
      'the call page after sign-in',
    );
    expect(
      await browser.evaluate<number>("return document.querySelector('[data-testid=transcript]').children.length;"),
    ).toBe(5);
  }, 60_000);
});

/**
 * What the fake microphone says: silence while the call connects and the
 * agent greets, the question spoken by flite, then silence while the agent
 * answers. Chromium reads it once (`%noloop`) from when the page opens the
 * microphone, and then captures silence.
 */
function callerWav(dir: string): string {
  const spoken = join(dir, 'question.wav');
  const flite = spawnSync('flite', ['-t', 'Can you tell me your opening hours please?', '-o', spoken], {
    encoding: 'utf8',
  });
  if (flite.status !== 0) throw new Error(`flite failed: ${flite.stderr}`);
  const question = parseWav(readFileSync(spoken));
  const rate = question.sampleRate;
  const samples = new Int16Array(rate * 6 + question.samples.length + rate * 25);
  samples.set(question.samples, rate * 6);
  const path = join(dir, 'caller.wav');
  writeFileSync(path, encodeWav(samples, rate, 1));
  return path;
}

describe.runIf(chromium && hasFlite)('a web call from the console in Chromium, with a fake microphone', () => {
  let t: TestApp;
  let origin: string;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wsapi-console-call-'));
    t = await listeningApp({ env: { CALL_RECORDING: '1' }, clock: new WallClock() });
    origin = t.config.publicUrl;
    browser = await consoleBrowser([
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${callerWav(dir)}%noloop`,
      '--autoplay-policy=user-gesture-required',
    ]);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in, calls the agent with a knowledge base, hears its answer about the opening hours; the call page shows transcript, latency and a playable recording', async (context) => {
    const user = await createVerifiedUser(t);
    // Web calls are the subject of another change (POST /api/calls/web): until this server has the route, there is nothing to call.
    const probe = await t.app.inject({
      method: 'POST',
      url: '/api/calls/web',
      headers: bearer(user.token),
      payload: {},
    });
    if (probe.statusCode === 404 && probe.json().code === 'route_not_found') {
      context.skip('POST /api/calls/web is not on this server');
      return;
    }
    const kbId = await knowledgeBase(t, user);
    const agentId = await agent(t, user, {
      name: 'Amy',
      prompt: 'You are Amy at the clinic. Answer questions about the clinic from its knowledge base.',
      firstMessage: 'Hello, clinic here.',
      knowledgeBaseId: kbId,
    });

    await signIn(browser, `${origin}/console`, user, { keyboard: true });
    expect(await browser.evaluate<string>("return document.querySelector('[data-testid=agent-select]').value;")).toBe(
      agentId,
    );
    await browser.evaluate("document.querySelector('[data-testid=call]').click();", { userGesture: true });

    // The answer from the knowledge base appears in the live transcript as the agent starts saying it (final: false),
    // before its audio has played: the words show with the voice, not after it.
    await browser.waitFor(
      "[...document.querySelectorAll('[data-testid=transcript] [data-role=agent]')].some((li) => /Monday/.test(li.textContent))",
      90_000,
      "the agent's answer about the opening hours",
    );
    const saying = await browser.evaluate<{ final: string; who: string }>(`
      const line = [...document.querySelectorAll('[data-testid=transcript] [data-role=agent]')].find((li) => /Monday/.test(li.textContent));
      return { final: line.dataset.final, who: line.querySelector('.who-said').textContent };
    `);
    expect(saying).toMatchObject({ final: 'false', who: 'Agent \u00b7 saying' });
    await browser.evaluate('window.scrollTo(0, 0);');
    await browser.screenshot(join(screenshotDir(dir), 'console-call.png'), 1100, 1150);
    const live = await browser.evaluate<{
      state: string;
      sessionId: string;
      lines: Array<{ role: string; text: string }>;
      tools: string;
    }>(`
      const status = document.getElementById('call-status');
      return {
        state: status.dataset.state,
        sessionId: status.dataset.sessionId,
        lines: [...document.querySelector('[data-testid=transcript]').children].map((li) => ({ role: li.dataset.role, text: li.textContent })),
        tools: document.querySelector('[data-testid=tool-calls]').textContent,
      };
    `);
    expect(live.state).toBe('live');
    expect(live.lines.some((l) => l.role === 'caller')).toBe(true);
    expect(live.tools).toContain('search_knowledge');
    await browser.waitFor(
      "Number(document.getElementById('call-status').dataset.agentAudioMs) > 1500",
      30_000,
      "the agent's answer played",
    );
    // Once heard, the same line is final.
    await browser.waitFor(
      "[...document.querySelectorAll('[data-testid=transcript] [data-role=agent]')].some((li) => /Monday/.test(li.textContent) && li.dataset.final === 'true')",
      30_000,
      'the answer heard',
    );

    await browser.evaluate("document.querySelector('[data-testid=hang-up]').click();", { userGesture: true });
    await browser.waitFor(
      "document.getElementById('call-status').dataset.state === 'ended' && !document.getElementById('call-link').hidden",
      15_000,
      'the call to end',
    );
    const web = (
      await t.app.inject({ method: 'GET', url: `/api/calls/${live.sessionId}`, headers: bearer(user.token) })
    ).json();
    expect(web).toMatchObject({ id: live.sessionId, direction: 'web' });
    expect(web.costUsd).toBeUndefined();

    await browser.evaluate("document.getElementById('call-link').click();");
    await browser.waitFor(
      `location.pathname === '/console/calls/${live.sessionId}' && document.getElementById('content').dataset.ready === 'true'`,
      60_000,
      'the call page with its record',
    );
    const page = await browser.evaluate<{
      lines: Array<{ role: string; text: string }>;
      latency: string[][];
      recording: string | null;
    }>(`
      return {
        lines: [...document.querySelector('[data-testid=transcript]').children].map((li) => ({ role: li.dataset.role, text: li.textContent })),
        latency: [...document.querySelectorAll('[data-testid=latency] tbody tr')].map((row) => [...row.cells].map((c) => c.textContent)),
        recording: document.querySelector('[data-testid=recording]').getAttribute('src'),
      };
    `);
    expect(page.lines.some((l) => l.role === 'caller')).toBe(true);
    expect(page.lines.some((l) => l.role === 'agent' && /Monday/.test(l.text))).toBe(true);
    expect(page.latency.length).toBeGreaterThanOrEqual(1);
    for (const row of page.latency) for (const cell of row.slice(2)) expect(cell).toMatch(/^\d+ ms$/);
    expect(page.recording).toBe(`/api/calls/${live.sessionId}/recording`);
    const played = await browser.evaluate<{ duration: number; time: number }>(
      `
      const audio = document.querySelector('[data-testid=recording]');
      audio.muted = true;
      await audio.play();
      while (audio.currentTime < 0.5) await new Promise((r) => setTimeout(r, 20));
      audio.pause();
      return { duration: audio.duration, time: audio.currentTime };
    `,
      { userGesture: true },
    );
    expect(played.duration).toBeGreaterThan(3);
    expect(await cspViolations(browser)).toEqual([]);
    await browser.evaluate('window.scrollTo(0, 0);');
    await browser.screenshot(join(screenshotDir(dir), 'console-call-page.png'), 1100, 1400);
  }, 180_000);
});

/** One browser connection to the scripted media server: what it sent, and when. */
class ScriptedSocket {
  readonly frames: number[] = [];
  readonly nonSilentFrames: number[] = [];
  readonly messages: Array<{ at: number; message: { type: string; name?: string; digit?: string } }> = [];
  constructor(
    readonly socket: WsSocket,
    readonly url: string,
  ) {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        this.frames.push(data.length);
        let peak = 0;
        for (let i = 0; i + 1 < data.length; i += 2) peak = Math.max(peak, Math.abs(data.readInt16LE(i)));
        if (peak > 500) this.nonSilentFrames.push(peak);
      } else this.messages.push({ at: Date.now(), message: JSON.parse(String(data)) });
    });
  }

  send(message: Record<string, unknown>) {
    this.socket.send(JSON.stringify(message));
  }

  /** `ms` of a 440 Hz tone as 20 ms PCM16LE frames at 16 kHz, all at once (not paced): playing it must take `ms`. */
  sendTone(ms: number) {
    for (let frame = 0; frame < ms / 20; frame++) {
      const bytes = Buffer.alloc(640);
      for (let i = 0; i < 320; i++)
        bytes.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * (frame * 320 + i)) / 16000)), i * 2);
      this.socket.send(bytes);
    }
  }

  async next(type: string, name?: string, timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(
        (m) => m.message.type === type && (name === undefined || m.message.name === name),
      );
      if (found) return found.at;
      if (Date.now() > deadline) throw new Error(`no ${type} ${name ?? ''} within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

describe.runIf(chromium)(
  "the console's web call client against a scripted media server (the protocol of DESIGN.md)",
  () => {
    let t: TestApp;
    let origin: string;
    let browser: Browser;
    let media: WebSocketServer;
    let mediaOrigin: string;
    let user: TestUser;
    const connections: ScriptedSocket[] = [];
    const started: unknown[] = [];
    let onConnect: (socket: ScriptedSocket) => void = () => {};

    beforeAll(async () => {
      const mediaPort = await freePort();
      media = new WebSocketServer({ port: mediaPort, host: '127.0.0.1' });
      media.on('connection', (socket, request) => {
        const scripted = new ScriptedSocket(socket, request.url ?? '');
        connections.push(scripted);
        onConnect(scripted);
      });
      mediaOrigin = `127.0.0.1:${mediaPort}`;
      // PUBLIC_URL names the media server: the console's CSP lets the page reach it, as it lets it reach the real one.
      t = await listeningApp({ env: { PUBLIC_URL: `http://${mediaOrigin}` } });
      origin = `http://127.0.0.1:${t.config.port}`;
      user = await createVerifiedUser(t);
      browser = await consoleBrowser([
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        '--autoplay-policy=user-gesture-required',
      ]);
      // POST /api/calls/web is answered here, as the service answers it, pointing at the scripted media server.
      let calls = 0;
      browser.on('Fetch.requestPaused', (paused: { requestId: string; request: { postData?: string } }) => {
        started.push(JSON.parse(paused.request.postData ?? 'null'));
        calls++;
        const answer = {
          sessionId: `019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e0${calls}`,
          url: `ws://${mediaOrigin}/api/media/web?token=single-use-${calls}`,
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
          audio: { encoding: 'pcm16le', sampleRate: 16000, frameMs: 20 },
        };
        void browser.send('Fetch.fulfillRequest', {
          requestId: paused.requestId,
          responseCode: 200,
          responseHeaders: [{ name: 'content-type', value: 'application/json' }],
          body: Buffer.from(JSON.stringify(answer)).toString('base64'),
        });
      });
      await browser.send('Fetch.enable', { patterns: [{ urlPattern: '*/api/calls/web' }] });
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await t?.close();
      await new Promise((resolve) => media?.close(resolve));
    });

    const pageState = () =>
      browser.evaluate<{
        state: string;
        text: string;
        heardMs: number;
        lines: Array<{ role: string; text: string; final: string }>;
        tools: string;
        link: string | null;
      }>(`
      const status = document.getElementById('call-status');
      const link = document.getElementById('call-link');
      return {
        state: status.dataset.state,
        text: status.textContent,
        heardMs: Number(status.dataset.agentAudioMs),
        lines: [...document.querySelector('[data-testid=transcript]').children].map((li) => ({ role: li.dataset.role, text: li.querySelector('.text').textContent, final: li.dataset.final })),
        tools: document.querySelector('[data-testid=tool-calls]').textContent,
        link: link.hidden ? null : link.getAttribute('href'),
      };
    `);

    it('sends whole 20 ms frames of the microphone, shows the transcript and tool calls, acknowledges a mark only once its audio has played, stops on clear, sends DTMF and hangs up', async () => {
      await signIn(browser, `${origin}/console`, user, { keyboard: true });
      await browser.evaluate(`
      const select = document.querySelector('[data-testid=agent-select]');
      select.value = '';
      select.dispatchEvent(new Event('change'));
      document.querySelector('[data-testid=prompt]').value = 'Be brief.';
    `);
      const connected = new Promise<ScriptedSocket>((resolve) => (onConnect = resolve));
      await browser.evaluate("document.querySelector('[data-testid=call]').click();", { userGesture: true });
      const call = await within(connected, 15_000, 'the media connection');
      expect(started).toEqual([{ agent: { name: 'Console agent', prompt: 'Be brief.' } }]);
      expect(call.url).toBe('/api/media/web?token=single-use-1');
      await browser.waitFor(
        "document.getElementById('call-status').dataset.state === 'live'",
        10_000,
        'the call to be live',
      );

      // The microphone (Chromium's fake device beeps) arrives as whole 20 ms frames of PCM16LE at 16 kHz.
      await until(() => call.frames.length >= 60 && call.nonSilentFrames.length > 0, 10_000, 'microphone frames');
      expect(new Set(call.frames)).toEqual(new Set([640]));

      // A partial line is replaced by its final text: one child per line.
      call.send({ type: 'transcript', role: 'caller', text: 'What are', final: false });
      call.send({ type: 'transcript', role: 'caller', text: 'What are your hours?', final: true });
      call.send({
        type: 'tool',
        name: 'search_knowledge',
        arguments: { query: 'hours' },
        result: { matches: [{ text: 'Nine to five.' }] },
      });
      call.send({ type: 'transcript', role: 'agent', text: 'We are open nine to five.', final: true });
      await browser.waitFor(
        "document.querySelectorAll('[data-testid=transcript] li').length === 2 && document.querySelector('[data-testid=tool-calls]').textContent.includes('Nine to five')",
        5000,
        'the transcript',
      );
      let state = await pageState();
      expect(state.lines).toEqual([
        { role: 'caller', text: 'What are your hours?', final: 'true' },
        { role: 'agent', text: 'We are open nine to five.', final: 'true' },
      ]);
      expect(state.tools).toContain('search_knowledge');

      // An agent reply shows as it is said, sentence by sentence (final: false), then as heard: cut off, or gone when none of it was heard.
      call.send({ type: 'transcript', role: 'agent', text: 'Let me check.', final: false });
      await browser.waitFor(
        "document.querySelectorAll('[data-testid=transcript] li').length === 3",
        5000,
        'the reply being said',
      );
      expect((await pageState()).lines[2]).toEqual({ role: 'agent', text: 'Let me check.', final: 'false' });
      call.send({ type: 'transcript', role: 'agent', text: 'Let me check. We open at nine.', final: false });
      call.send({ type: 'transcript', role: 'agent', text: 'Let me check. We open', final: true, interrupted: true });
      call.send({ type: 'transcript', role: 'agent', text: 'Anything else?', final: false });
      call.send({ type: 'transcript', role: 'agent', text: '', final: true });
      call.send({ type: 'transcript', role: 'caller', text: 'Thanks.', final: true });
      await browser.waitFor(
        "document.querySelectorAll('[data-testid=transcript] li').length === 4 && document.querySelector('[data-testid=transcript] li:last-child').dataset.role === 'caller'",
        5000,
        'the replies as heard',
      );
      const cut = await browser.evaluate<{ text: string; who: string; interrupted: string }>(`
      const line = document.querySelectorAll('[data-testid=transcript] li')[2];
      return { text: line.querySelector('.text').textContent, who: line.querySelector('.who-said').textContent, interrupted: line.dataset.interrupted };
    `);
      expect(cut).toEqual({
        text: 'Let me check. We open',
        who: 'Agent \u00b7 cut off (what you heard)',
        interrupted: 'true',
      });

      // A second of audio sent at once, then a mark: the mark is acknowledged when the second has played, not when it arrived.
      const sent = Date.now();
      call.sendTone(1000);
      call.send({ type: 'mark', name: 'reply-1' });
      const acknowledged = await call.next('mark', 'reply-1', 5000);
      expect(acknowledged - sent).toBeGreaterThanOrEqual(950);
      expect(acknowledged - sent).toBeLessThan(2500);
      await browser.waitFor(
        "Number(document.getElementById('call-status').dataset.agentAudioMs) >= 980",
        2000,
        'the second played',
      );

      // Barge-in: three seconds sent, `clear` after 0.4 s: playback stops and that mark is never acknowledged.
      const heardBefore = (await pageState()).heardMs;
      call.sendTone(3000);
      call.send({ type: 'mark', name: 'reply-2' });
      await new Promise((resolve) => setTimeout(resolve, 400));
      call.send({ type: 'clear' });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(call.messages.some((m) => m.message.name === 'reply-2')).toBe(false);
      expect((await pageState()).heardMs - heardBefore).toBeLessThan(800);
      // Audio after the clear plays and is acknowledged again.
      call.sendTone(200);
      call.send({ type: 'mark', name: 'reply-3' });
      await call.next('mark', 'reply-3', 3000);

      // A digit typed outside the form's fields is DTMF.
      await browser.evaluate("document.querySelector('[data-testid=hang-up]').focus();");
      await browser.send('Input.dispatchKeyEvent', {
        type: 'keyDown',
        key: '5',
        code: 'Digit5',
        text: '5',
        windowsVirtualKeyCode: 53,
      });
      await browser.send('Input.dispatchKeyEvent', {
        type: 'keyUp',
        key: '5',
        code: 'Digit5',
        windowsVirtualKeyCode: 53,
      });
      await call.next('dtmf');
      expect(call.messages.find((m) => m.message.type === 'dtmf')!.message.digit).toBe('5');

      // Hang up: the page asks, the server answers `ended` and closes; the microphone stops.
      call.socket.on('message', (data: Buffer, isBinary: boolean) => {
        if (!isBinary && JSON.parse(String(data)).type === 'hangup') {
          call.send({ type: 'ended', reason: 'caller_hung_up' });
          call.socket.close(1000, 'caller_hung_up');
        }
      });
      await browser.evaluate("document.querySelector('[data-testid=hang-up]').click();", { userGesture: true });
      await call.next('hangup');
      await browser.waitFor("document.getElementById('call-status').dataset.state === 'ended'", 5000, 'the end');
      state = await pageState();
      expect(state.text).toBe('Call ended: caller_hung_up.');
      expect(state.link).toBe('/console/calls/019ab3f0-7c2e-7a51-9d1e-2f6c8b1a4e01');
      expect(
        await browser.evaluate<boolean>(
          "return !document.querySelector('[data-testid=call]').disabled && document.querySelector('[data-testid=hang-up]').disabled;",
        ),
      ).toBe(true);
      expect(await cspViolations(browser)).toEqual([]);
    }, 90_000);

    it('shows a refused call token (close 1008) as the end of the call', async () => {
      onConnect = (socket) => socket.socket.close(1008, 'token refused');
      await browser.evaluate("document.querySelector('[data-testid=call]').click();", { userGesture: true });
      await browser.waitFor(
        "document.getElementById('call-status').dataset.state === 'ended' && document.getElementById('call-status').textContent.includes('refused')",
        10_000,
        'the refusal',
      );
      expect((await pageState()).text).toBe('Call ended: refused: token refused.');
      expect(await cspViolations(browser)).toEqual([]);
    }, 30_000);
  },
);
