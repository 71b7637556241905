// The SSRF filter is proven on the address check itself (no request ever goes
// to a private, link-local or metadata address); real requests go only to a
// local server on 127.0.0.1.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OutboundHttpError,
  addressRange,
  bufferResponse,
  createOperatorHttp,
  createOutboundHttp,
  isPublicAddress,
} from '../../src/lib/outbound-http.js';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '2130706433',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '[::ffff:127.0.0.1]',
    '::ffff:7f00:1',
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    'fe80::1',
    'fe80::1%eth0',
    'fd00::',
    'fd00:ec2::254',
    '100.100.100.200',
    '100.64.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '192.0.0.1',
    '198.18.0.1',
    '240.0.0.1',
    '64:ff9b::7f00:1',
    '2002:7f00:1::',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    'localhost',
    'not an address',
    '',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('addressRange: IPv4-compatible and IPv4-mapped IPv6 carrying 127/8 are loopback', () => {
  // Unit tests of the check only: nothing is sent to these addresses.
  it.each([
    '::127.0.0.1',
    '::7f00:1',
    '[::7f00:1]',
    '::ffff:7f00:1',
    '0:0:0:0:0:0:127.0.0.1',
    '0000:0000:0000:0000:0000:0000:7f00:0001',
    '::127.255.255.254',
    '::7fff:fffe',
    '0:0:0:0:0:ffff:127.0.0.1',
    '::ffff:127.0.0.1',
  ])('%s is loopback, never public', (address) => {
    expect(addressRange(address)).toBe('loopback');
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each([
    ['::a00:1', 'private'],
    ['::10.0.0.1', 'private'],
    ['::a9fe:a9fe', 'linkLocal'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['::808:808', 'ipv4Compatible'],
  ])('judges %s by the IPv4 address it carries (%s), never public', (address, range) => {
    expect(addressRange(address)).toBe(range);
    expect(isPublicAddress(address)).toBe(false);
  });

  it('keeps :: and ::1 as they are, and answers null for what is not an address', () => {
    expect(addressRange('::')).toBe('unspecified');
    expect(addressRange('::1')).toBe('loopback');
    expect(addressRange('localhost')).toBeNull();
  });
});

let server: Server;
let port: number;
let base: string;
const seen: Array<{ method: string; url: string; authorization?: string; body: string }> = [];

function handle(req: IncomingMessage, res: ServerResponse) {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method!, url: req.url!, authorization: req.headers.authorization, body });
    const url = new URL(req.url!, base);
    if (url.pathname === '/hello') return res.end('hello');
    if (url.pathname === '/chain') {
      const left = Number(url.searchParams.get('n'));
      if (left === 0) return res.end('end of chain');
      res.writeHead(302, { location: `/chain?n=${left - 1}` });
      return res.end();
    }
    if (url.pathname === '/see-other') {
      res.writeHead(303, { location: '/hello' });
      return res.end();
    }
    if (url.pathname === '/to') {
      res.writeHead(307, { location: url.searchParams.get('target')! });
      return res.end();
    }
    if (url.pathname === '/big') {
      res.writeHead(200, { 'content-length': String(2 * 1024 * 1024) });
      return res.end(Buffer.alloc(2 * 1024 * 1024, 97));
    }
    if (url.pathname === '/big-chunked') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (let i = 0; i < 32; i += 1) res.write(Buffer.alloc(64 * 1024, 98));
      return res.end();
    }
    if (url.pathname === '/drip') {
      // 12 pieces, 100 ms apart: longer than a 1 s deadline, never silent for 1 s.
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        res.write(`piece ${sent}\n`);
        if (++sent === 12) {
          clearInterval(timer);
          res.end();
        }
      }, 100);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (url.pathname === '/never') return; // answers nothing
    res.writeHead(404);
    res.end();
  });
}

beforeAll(async () => {
  server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(promise: Promise<unknown>): Promise<OutboundHttpError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundHttpError);
    return error as OutboundHttpError;
  }
  throw new Error('expected the request to fail');
}

describe('createOutboundHttp', () => {
  it('refuses the local server by default, under every spelling, before sending anything', async () => {
    const http = createOutboundHttp();
    const before = seen.length;
    for (const host of [
      '127.0.0.1',
      '127.1',
      '0x7f.0.0.1',
      '0177.0.0.1',
      '2130706433',
      '[::ffff:127.0.0.1]',
      'localhost',
      '[::1]',
    ]) {
      const error = await failure(http(`http://${host}:${port}/hello`));
      expect(error.reason, host).toBe('blocked_address');
    }
    expect(seen.length).toBe(before);
    await http.close();
  });

  it('refuses a name whose resolver answer holds any non-public address', async () => {
    // The resolver is replaced: the name "looks" public but resolves to the metadata address.
    const http = createOutboundHttp({
      lookup: ((_host: string, _opts: unknown, cb: (e: null, a: Array<{ address: string; family: number }>) => void) =>
        cb(null, [{ address: '169.254.169.254', family: 4 }])) as never,
    });
    const error = await failure(http(`http://metadata.example:${port}/latest/meta-data`));
    expect(error.reason).toBe('blocked_address');
    expect(error.message).toContain('169.254.169.254');
    await http.close();
  });

  it('refuses other schemes and URLs with credentials', async () => {
    const http = createOutboundHttp({ allowPrivate: true });
    expect((await failure(http('file:///etc/passwd'))).reason).toBe('invalid_url');
    expect((await failure(http('ftp://127.0.0.1/x'))).reason).toBe('invalid_url');
    expect((await failure(http(`http://user:pw@127.0.0.1:${port}/hello`))).reason).toBe('invalid_url');
    await http.close();
  });

  it('fetches from the local server when private addresses are allowed', async () => {
    const http = createOutboundHttp({ allowPrivate: true });
    const res = await http(`${base}/hello`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    expect(res.url).toBe(`${base}/hello`);
    await http.close();
  });

  it('follows at most 5 redirects and reports the final URL', async () => {
    const http = createOutboundHttp({ allowPrivate: true });
    const ok = await http(`${base}/chain?n=5`);
    expect(await ok.text()).toBe('end of chain');
    expect(ok.url).toBe(`${base}/chain?n=0`);
    expect((await failure(http(`${base}/chain?n=6`))).reason).toBe('too_many_redirects');
    await http.close();
  });

  it('re-checks every redirect: an allowed address that redirects to a refused one fails', async () => {
    const http = createOutboundHttp({ allowAddress: (a) => a === '127.0.0.1' });
    expect(await (await http(`${base}/hello`)).text()).toBe('hello');
    for (const target of [`http://127.0.0.2:${port}/hello`, `http://[::ffff:7f00:2]:${port}/hello`]) {
      const before = seen.length;
      const error = await failure(http(`${base}/to?target=${encodeURIComponent(target)}`));
      expect(error.reason, target).toBe('blocked_address');
      expect(seen.length).toBe(before + 1); // only the first hop reached the server
    }
    expect((await failure(http(`${base}/to?target=${encodeURIComponent('file:///etc/passwd')}`))).reason).toBe(
      'invalid_url',
    );
    await http.close();
  });

  it('turns a POST answered by 303 into a GET without a body, and drops credentials across origins', async () => {
    const http = createOutboundHttp({ allowPrivate: true });
    const before = seen.length;
    const res = await http(`${base}/see-other`, {
      method: 'POST',
      body: 'payload',
      headers: { authorization: 'Bearer secret' },
    });
    expect(await res.text()).toBe('hello');
    expect(seen.slice(before).map((s) => [s.method, s.url, s.body, s.authorization])).toEqual([
      ['POST', '/see-other', 'payload', 'Bearer secret'],
      ['GET', '/hello', '', 'Bearer secret'],
    ]);
    const cross = seen.length;
    await (
      await http(`${base}/to?target=${encodeURIComponent(`http://localhost:${port}/hello`)}`, {
        headers: { authorization: 'Bearer secret' },
      })
    ).text();
    expect(seen.slice(cross).map((s) => s.authorization)).toEqual(['Bearer secret', undefined]);
    await http.close();
  });

  it('caps the body size, by Content-Length and while streaming', async () => {
    const http = createOutboundHttp({ allowPrivate: true, maxBytes: 1024 * 1024 });
    expect((await failure(http(`${base}/big`))).reason).toBe('too_large');
    const res = await http(`${base}/big-chunked`);
    expect((await failure(res.arrayBuffer())).reason).toBe('too_large');
    await http.close();
  });

  it('gives up on a server that never answers', async () => {
    const http = createOutboundHttp({ allowPrivate: true, timeoutMs: 300 });
    expect((await failure(http(`${base}/never`))).reason).toBe('timeout');
    await http.close();
  });

  it("calls a silent server a timeout also when undici's headers timer fires before the deadline", async () => {
    // No deadline: only undici's headers timer (timeoutMs) can end the wait, so its error must read as a timeout, not a network failure.
    const http = createOutboundHttp({ allowPrivate: true, timeoutMs: 300, deadlineMs: null });
    const error = await failure(http(`${base}/never`));
    expect(error.reason).toBe('timeout');
    expect(error.message).toBe('the request timed out');
    await http.close();
  });

  it('without a deadline (deadlineMs: null) reads a stream longer than timeoutMs that is never silent that long', async () => {
    const streaming = createOutboundHttp({ allowPrivate: true, timeoutMs: 1000, deadlineMs: null });
    const text = await (await streaming(`${base}/drip`)).text();
    expect(text.split('\n').filter(Boolean)).toHaveLength(12);
    await streaming.close();
    const bounded = createOutboundHttp({ allowPrivate: true, timeoutMs: 1000 });
    expect((await failure((await bounded(`${base}/drip`)).text())).reason).toBe('timeout');
    await bounded.close();
  });
});

describe('createOperatorHttp and bufferResponse', () => {
  it('reaches a private address the operator configured and answers a redirect as it is, without following it', async () => {
    const http = createOperatorHttp();
    expect(await (await http(`${base}/hello`)).text()).toBe('hello');
    const before = seen.length;
    const res = await http(`${base}/to?target=${encodeURIComponent(`http://localhost:${port}/hello`)}`, {
      headers: { 'xi-api-key': 'secret' },
    });
    expect(res.status).toBe(307);
    expect(seen.length).toBe(before + 1);
    await http.close();
  });

  it('bufferResponse reads the whole body, so its size cap fails at the call', async () => {
    const http = createOperatorHttp({ maxBytes: 1024 * 1024 });
    const ok = await bufferResponse(await http(`${base}/hello`));
    expect([ok.status, ok.url, await ok.text()]).toEqual([200, `${base}/hello`, 'hello']);
    expect((await failure(http(`${base}/big-chunked`).then(bufferResponse))).reason).toBe('too_large');
    const missing = await bufferResponse(await http(`${base}/nothing-here`));
    expect(missing.status).toBe(404);
    await http.close();
  });
});
