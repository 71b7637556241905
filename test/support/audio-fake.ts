// A local audio server speaking our audio protocol: accepts POST /calls
// (Standard Webhooks signature checked with the official library), then
// reports progress to the call's progress_url, signed the same way. Tests may
// also send reports of their own (forged, replayed, out of order).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface FakeCallRequest {
  headers: Record<string, string | string[] | undefined>;
  body: { session_id: string; progress_url: string; call: Record<string, unknown> };
  signatureValid: boolean;
}

export interface AudioFakeOptions {
  secret: string;
  /** Play queued → ringing → in_progress → completed after accepting a call (default true). */
  autoplay?: boolean;
  /** Answer POST /calls with this status instead of 201. */
  refuseWith?: number;
}

export async function startAudioFake(options: AudioFakeOptions) {
  const calls: FakeCallRequest[] = [];
  /** Answers our service gave to each report sent. */
  const reports: Array<{ sessionId: string; id: string; status: number; body: string }> = [];
  const played: Array<Promise<void>> = [];

  /** Sends one signed progress report; `secret` and `timestamp` can be overridden to forge or replay. */
  async function report(
    progressUrl: string,
    body: Record<string, unknown>,
    opts: { id?: string; secret?: string; timestamp?: Date; rawBody?: string } = {},
  ) {
    const id = opts.id ?? `evt_${randomUUID()}`;
    const text = JSON.stringify(body);
    const timestamp = opts.timestamp ?? new Date();
    const signature = new Webhook(opts.secret ?? options.secret).sign(id, timestamp, text);
    const res = await fetch(progressUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': signature,
      },
      body: opts.rawBody ?? text,
    });
    const answer = await res.text();
    reports.push({ sessionId: progressUrl.split('/').pop()!, id, status: res.status, body: answer });
    return { id, status: res.status, body: answer };
  }

  async function play(progressUrl: string) {
    const at = () => new Date().toISOString();
    await report(progressUrl, { status: 'queued', at: at() });
    await report(progressUrl, { status: 'ringing', at: at() });
    await report(progressUrl, { status: 'in_progress', at: at() });
    await report(progressUrl, {
      status: 'completed',
      at: at(),
      duration_seconds: 42,
      transcript: [
        { role: 'agent', text: 'Hello from the audio server.' },
        { role: 'contact', text: 'Hi there.' },
      ],
    });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/calls') return res.writeHead(404).end();
      const text = Buffer.concat(chunks).toString('utf8');
      let signatureValid = true;
      try {
        new Webhook(options.secret).verify(text, req.headers as Record<string, string>);
      } catch {
        signatureValid = false;
      }
      const body = JSON.parse(text) as FakeCallRequest['body'];
      calls.push({ headers: req.headers, body, signatureValid });
      if (!signatureValid)
        return res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'bad signature' }));
      if (options.refuseWith)
        return res
          .writeHead(options.refuseWith, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'no capacity' }));
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `ac_${body.session_id}` }));
      if (options.autoplay !== false) played.push(play(body.progress_url));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    reports,
    report,
    /** Resolves when every call played so far has been reported in full. */
    settled: () => Promise.all(played),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type AudioFake = Awaited<ReturnType<typeof startAudioFake>>;
