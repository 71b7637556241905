// A local connector backend speaking what CONNECTOR_URL points at: POST
// {path} with JSON params and a bearer token, answered as SSE or NDJSON,
// slowly when asked, split mid-frame across writes, or broken off mid-stream.
//   params.format: 'sse' (default) | 'ndjson'
//   params.count: records to send (default 3); /get-leads sends params.credits + (params.extra ?? 0)
//   params.junk: a frame that is not JSON after the first record
//   params.delayMs: pause between records
//   params.failAfter: destroy the connection after that many records
//   params.hangAfter: stop sending (without ending) after that many records
//   params.pauseAfter, params.pauseMs: stay silent for pauseMs after that many records, then go on
//   path /refuse: HTTP 503
// Like a lenient web framework (Express by default), it serves leads on any
// spelling of `/get-leads` under any base: any case, trailing or doubled
// slashes, dot segments, percent-encoded characters. `requests` records the
// path exactly as it arrived.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  path: string;
  params: Record<string, any>;
  authorization: string | undefined;
  accept: string | undefined;
}

export interface ConnectorFake {
  url: string;
  requests: FakeRequest[];
  /** Responses still open (a hanging stream the client has not closed). */
  openResponses(): number;
  /** Ends every response left hanging (hangAfter) and stops the server. */
  close(): Promise<void>;
}

/** The record number i of a stream, as the fake sends it. */
export const fakeRecord = (i: number, path = '/records') => ({
  n: i,
  name: `Record ${i}`,
  phone: `+1555010${String(i % 100).padStart(2, '0')}`,
  tags: ['a', 'b'],
  nested: { path, ok: true, note: 'line one\nline two' },
});

export async function startConnectorFake(): Promise<ConnectorFake> {
  const requests: FakeRequest[] = [];
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => void handle(req, res));

  async function handle(req: IncomingMessage, res: ServerResponse) {
    let text = '';
    for await (const chunk of req) text += chunk;
    const params = text ? JSON.parse(text) : {};
    const path = req.url ?? '/';
    requests.push({ path, params, authorization: req.headers.authorization, accept: req.headers.accept });
    if (req.method !== 'POST') return void res.writeHead(405).end();
    if (path === '/refuse')
      return void res.writeHead(503, { 'content-type': 'text/plain' }).end('connector is down for maintenance');
    const sse = params.format !== 'ndjson';
    res.writeHead(200, { 'content-type': sse ? 'text/event-stream' : 'application/x-ndjson' });
    open.add(res);
    res.on('close', () => open.delete(res));
    const count: number = isLeadsPath(path)
      ? Number(params.credits) + Number(params.extra ?? 0)
      : Number(params.count ?? 3);
    if (sse) res.write(': connector stream\n\n');
    for (let i = 0; i < count; i++) {
      if (params.failAfter === i) {
        // What was sent reaches the client first; then the connection drops without the chunked terminator.
        await new Promise((resolve) => res.write('', resolve));
        await sleep(50);
        return void res.socket?.destroy();
      }
      if (params.hangAfter === i) return; // left open; close() ends it
      if (params.pauseAfter === i) {
        await sleep(Number(params.pauseMs));
        if (res.destroyed) return;
      }
      const json = JSON.stringify(fakeRecord(i, path));
      // SSE: the record's JSON split over two data lines after its first comma (joined with \n: whitespace, the same JSON), CRLF line ends on odd records.
      const frame = sse
        ? i % 2
          ? `id: ${i}\r\ndata: ${json.slice(0, json.indexOf(',') + 1)}\r\ndata: ${json.slice(json.indexOf(',') + 1)}\r\n\r\n`
          : `event: record\ndata: ${json}\n\n`
        : `${json}\n`;
      // Split each frame across two writes so the parser must join pieces.
      const cut = Math.floor(frame.length / 2);
      res.write(frame.slice(0, cut));
      if (params.delayMs) await sleep(params.delayMs);
      res.write(frame.slice(cut));
      if (params.junk && i === 0) res.write(sse ? 'data: this is not json\n\n' : 'not json either\n');
      if (params.delayMs) await sleep(params.delayMs);
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    openResponses: () => open.size,
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The leads endpoint, read leniently: decoded, lower-cased, empty and dot segments resolved. */
export function isLeadsPath(raw: string): boolean {
  const segments: string[] = [];
  for (const part of raw.split('?')[0]!.split('/')) {
    let segment = part;
    try {
      segment = decodeURIComponent(part);
    } catch {}
    segment = segment.toLowerCase();
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  return segments.at(-1) === 'get-leads';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
