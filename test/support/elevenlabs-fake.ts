// A local server speaking the part of ElevenLabs' API the service uses:
// GET /v1/voices and POST /v1/text-to-speech/{voice_id}, authenticated with
// the xi-api-key header. Answers like ElevenLabs: 401 with
// { detail: { status, message } } for a wrong key, 404 for an unknown voice,
// audio/mpeg bytes for speech. Every request is recorded.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  voices: Array<{ voice_id: string; name: string; category: string; description?: string; labels: Record<string, string>; preview_url: string }>;
  requests: ElevenLabsRequest[];
  /** The MP3 bytes text-to-speech answers for `text` (a frame header, then the text, so tests can check what was spoken). */
  audioFor(text: string): Buffer;
  close(): Promise<void>;
}

const MP3_FRAME_HEADER = Buffer.from([0xff, 0xfb, 0x90, 0x64]);

export async function startElevenLabsFake(): Promise<ElevenLabsFake> {
  const apiKey = 'xi-test-key-0123456789';
  const requests: ElevenLabsRequest[] = [];
  const voices: ElevenLabsFake['voices'] = [
    { voice_id: '21m00Tcm4TlvDq8ikWAM', name: 'Rachel', category: 'premade', labels: { accent: 'american', gender: 'female', age: 'young' }, preview_url: 'https://example.com/rachel.mp3' },
    { voice_id: 'AZnzlk1XvdvUeBnXmlld', name: 'Domi', category: 'premade', description: 'Strong and confident.', labels: { accent: 'american', gender: 'female' }, preview_url: 'https://example.com/domi.mp3' },
  ];
  const audioFor = (text: string) => Buffer.concat([Buffer.from('ID3'), Buffer.from([4, 0, 0, 0, 0, 0, 0]), MP3_FRAME_HEADER, Buffer.from(text, 'utf8')]);

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
    requests.push({ method: req.method ?? '', path: url.pathname, query: Object.fromEntries(url.searchParams), apiKey: typeof key === 'string' ? key : undefined, accept: req.headers.accept, body });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (key !== apiKey) return json(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    if (req.method === 'GET' && url.pathname === '/v1/voices') return json(200, { voices });
    const tts = /^\/v1\/text-to-speech\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && tts) {
      const voice = voices.find((v) => v.voice_id === decodeURIComponent(tts[1]));
      if (!voice) return json(404, { detail: { status: 'voice_not_found', message: 'A voice with the voice_id was not found.' } });
      const text = (body as { text?: unknown } | null)?.text;
      if (typeof text !== 'string' || text === '') return json(422, { detail: [{ loc: ['body', 'text'], msg: 'field required', type: 'value_error.missing' }] });
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      return res.end(audioFor(text));
    }
    json(404, { detail: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://127.0.0.1:${port}`,
    apiKey,
    voices,
    requests,
    audioFor,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
