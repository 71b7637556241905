// A browser's side of a web call for tests: opens the WebSocket of POST
// /api/calls/web's answer, speaks PCM16 at 16 kHz in paced 20 ms frames,
// echoes marks as a player does once the audio before them has played, and
// keeps every message it was sent.
import { expect, vi } from 'vitest';
import WebSocket from 'ws';
import type { TestApp } from '../../support/app.js';
import { type TestUser, bearer } from '../../support/factories.js';
import { multipartForm } from '../../support/multipart.js';
import { WallClock } from '../../support/wall-clock.js';

export { WallClock };

export type WebMessage = {
  type: string;
  role?: string;
  text?: string;
  final?: boolean;
  interrupted?: boolean;
  name?: string;
  arguments?: unknown;
  result?: unknown;
  reason?: string;
};

export class BrowserCall {
  readonly ws: WebSocket;
  readonly messages: WebMessage[] = [];
  /** Bytes of agent audio received before each message of `messages` arrived. */
  readonly agentBytesAt: number[] = [];
  /** Bytes of agent audio received, and when the last arrived. */
  agentBytes = 0;
  lastAudioAt = 0;
  /** Echo marks when they arrive (the audio before them is paced, so it has about played). */
  echoMarks = true;
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly opened: Promise<void>;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', () => resolve());
      this.ws.once('error', reject);
    });
    this.closed = new Promise((resolve) =>
      this.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    this.ws.on('message', (data, isBinary) => {
      if (isBinary) {
        this.agentBytes += (data as Buffer).length;
        this.lastAudioAt = Date.now();
        return;
      }
      const message = JSON.parse(String(data)) as WebMessage;
      this.messages.push(message);
      this.agentBytesAt.push(this.agentBytes);
      if (message.type === 'mark' && this.echoMarks) this.send({ type: 'mark', name: message.name });
    });
  }

  send(message: Record<string, unknown>) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  /** Streams PCM16 16 kHz as 20 ms binary frames at real pace, then `silenceMs` of silence. */
  async speak(pcm: Int16Array, silenceMs = 1200): Promise<void> {
    const frame = 320;
    const total = new Int16Array(Math.ceil(pcm.length / frame) * frame + (silenceMs / 20) * frame);
    total.set(pcm);
    const started = Date.now();
    for (let i = 0, n = 1; i + frame <= total.length; i += frame, n++) {
      if (this.ws.readyState !== WebSocket.OPEN) return;
      const chunk = total.subarray(i, i + frame);
      this.ws.send(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + n * 20 - Date.now())));
    }
  }

  of(type: string): WebMessage[] {
    return this.messages.filter((m) => m.type === type);
  }

  /** The transcript as heard: caller lines, and agent replies once played or cut (`final: true`; one that nobody heard left out). */
  lines(role: 'agent' | 'caller'): string[] {
    return this.of('transcript')
      .filter((m) => m.role === role && m.final !== false && m.text)
      .map((m) => m.text!);
  }

  async waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    await vi.waitFor(() => expect(check(), what).toBe(true), { timeout: timeoutMs, interval: 20 });
  }
}

/** A knowledge base of the user's with the clinic's opening hours. */
export async function clinicKnowledge(t: TestApp, user: TestUser): Promise<string> {
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
  expect(
    (
      await t.app.inject({
        method: 'POST',
        url: `/api/knowledge-bases/${kb.id}`,
        headers: { ...bearer(user.token), ...form.headers },
        payload: form.payload,
      })
    ).statusCode,
  ).toBe(200);
  return kb.id as string;
}

export async function startWebCall(t: TestApp, user: TestUser, payload: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/calls/web', headers: bearer(user.token), payload });
}

/** GET /api/calls/{id} once the call has ended and its record is written. */
export async function endedCall(t: TestApp, user: TestUser, sessionId: string, timeout = 20_000) {
  let view: Record<string, unknown> = {};
  await vi.waitFor(
    async () => {
      view = (
        await t.app.inject({ method: 'GET', url: `/api/calls/${sessionId}`, headers: bearer(user.token) })
      ).json();
      expect(['completed', 'failed', 'canceled']).toContain(view.status);
      expect(view.transcript).toBeDefined();
    },
    { timeout, interval: 100 },
  );
  return view as Record<string, any>;
}
