// A local server speaking the part of ElevenLabs' API the service uses:
// GET /v1/voices, POST /v1/text-to-speech/{voice_id} and
// POST /v1/text-to-speech/{voice_id}/stream, authenticated with the
// xi-api-key header. Answers like ElevenLabs: 401 with
// { detail: { status, message } } for a wrong key, 404 for an unknown voice,
// audio/mpeg bytes for speech; the stream route with output_format=ulaw_8000
// answers raw μ-law 8 kHz in chunks (chunked transfer), and can fail, stall
// or drop on command. Every request is recorded.
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { pcmToMulaw } from '../../src/lib/audio.js';

export interface ElevenLabsRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  apiKey: string | undefined;
  accept: string | undefined;
  body: unknown;
}

export interface ElevenLabsFake {
  apiBase: string;
  apiKey: string;
  voices: Array<{
    voice_id: string;
    name: string;
    category: string;
    description?: string;
    labels: Record<string, string>;
    preview_url: string;
  }>;
  requests: ElevenLabsRequest[];
  /** The MP3 bytes text-to-speech answers for `text` (a frame header, then the text, so tests can check what was spoken). */
  audioFor(text: string): Buffer;
  /** The μ-law 8 kHz bytes the stream route answers for `text`: a tone, 100 ms per word. */
  ulawFor(text: string): Buffer;
  /** How the stream route answers: chunk size and pause, or a scripted failure. */
  stream: {
    chunkBytes: number;
    delayMs: number /** Milliseconds before the first byte of a live stream (0 by default). */;
    firstByteDelayMs: number;
    failWith: number | null;
    after: 'end' | 'stall' | 'drop';
    afterBytes: number | null;
  };
  /** Stream responses still open. */
  openStreams(): number;
  close(): Promise<void>;
}

const MP3_FRAME_HEADER = Buffer.from([0xff, 0xfb, 0x90, 0x64]);

export async function startElevenLabsFake(): Promise<ElevenLabsFake> {
  const apiKey = 'xi-test-key-0123456789';
  const requests: ElevenLabsRequest[] = [];
  const voices: ElevenLabsFake['voices'] = [
    {
      voice_id: '21m00Tcm4TlvDq8ikWAM',
      name: 'Rachel',
      category: 'premade',
      labels: { accent: 'american', gender: 'female', age: 'young' },
      preview_url: 'https://example.com/rachel.mp3',
    },
    {
      voice_id: 'AZnzlk1XvdvUeBnXmlld',
      name: 'Domi',
      category: 'premade',
      description: 'Strong and confident.',
      labels: { accent: 'american', gender: 'female' },
      preview_url: 'https://example.com/domi.mp3',
    },
  ];
  const ulawFor = (text: string) => {
    const samples = Int16Array.from({ length: text.split(/\s+/).filter(Boolean).length * 800 }, (_, i) =>
      Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)),
    );
    return Buffer.from(pcmToMulaw(samples));
  };
  const stream: ElevenLabsFake['stream'] = {
    chunkBytes: 400,
    delayMs: 5,
    firstByteDelayMs: 0,
    failWith: null,
    after: 'end',
    afterBytes: null,
  };
  let streams = 0;
  const sockets = new Set<Socket>();
  const audioFor = (text: string) =>
    Buffer.concat([
      Buffer.from('ID3'),
      Buffer.from([4, 0, 0, 0, 0, 0, 0]),
      MP3_FRAME_HEADER,
      Buffer.from(text, 'utf8'),
    ]);

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = null;
    try {
      body = raw ? JSON.parse(raw) : null;
    } catch {
      body = raw;
    }
    const key = req.headers['xi-api-key'];
    requests.push({
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      apiKey: typeof key === 'string' ? key : undefined,
      accept: req.headers.accept,
      body,
    });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (key !== apiKey) return json(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    if (req.method === 'GET' && url.pathname === '/v1/voices') return json(200, { voices });
    const live = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(url.pathname);
    if (req.method === 'POST' && live) {
      const voice = voices.find((v) => v.voice_id === decodeURIComponent(live[1]));
      if (!voice)
        return json(404, {
          detail: { status: 'voice_not_found', message: 'A voice with the voice_id was not found.' },
        });
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || text === '')
        return json(422, { detail: [{ loc: ['body', 'text'], msg: 'field required', type: 'value_error.missing' }] });
      if (url.searchParams.get('output_format') !== 'ulaw_8000')
        return json(422, { detail: { status: 'invalid_output_format', message: 'this fake streams ulaw_8000 only' } });
      if (stream.failWith)
        return json(stream.failWith, {
          detail: { status: 'scripted', message: `scripted failure ${stream.failWith}` },
        });
      res.writeHead(200, { 'content-type': 'audio/basic', 'transfer-encoding': 'chunked' });
      streams += 1;
      res.on('close', () => (streams -= 1));
      const audio = ulawFor(text);
      if (stream.firstByteDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, stream.firstByteDelayMs));
      const limit = stream.afterBytes ?? audio.length;
      for (let i = 0; i < limit; i += stream.chunkBytes) {
        if (res.destroyed) return;
        res.write(audio.subarray(i, Math.min(i + stream.chunkBytes, limit)));
        await new Promise((resolve) => setTimeout(resolve, stream.delayMs));
      }
      if (stream.after === 'stall') return;
      if (stream.after === 'drop') return req.socket.destroy();
      return res.end();
    }
    const tts = /^\/v1\/text-to-speech\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && tts) {
      const voice = voices.find((v) => v.voice_id === decodeURIComponent(tts[1]));
      if (!voice)
        return json(404, {
          detail: { status: 'voice_not_found', message: 'A voice with the voice_id was not found.' },
        });
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || text === '')
        return json(422, { detail: [{ loc: ['body', 'text'], msg: 'field required', type: 'value_error.missing' }] });
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      return res.end(audioFor(text));
    }
    json(404, { detail: 'Not Found' });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://127.0.0.1:${port}`,
    apiKey,
    voices,
    requests,
    audioFor,
    ulawFor,
    stream,
    openStreams: () => streams,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
