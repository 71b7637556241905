// A local server speaking the OpenAI API the voice agent uses, over real HTTP:
// - POST /v1/audio/transcriptions: multipart (file, model, response_format),
//   Bearer key checked; the file is parsed as a WAV and must be 16-bit PCM;
//   answers { text } with the next scripted transcript.
// - POST /v1/chat/completions: JSON with stream: true; answers Server-Sent
//   Events from a script (text word by word, tool calls split over several
//   chunks, an HTTP error, a stall, a drop mid-stream).
// Every request is recorded. Wrong key: 401 with OpenAI's error body.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type ParsedWav, parseWav } from './wav.js';

export interface TranscriptionRequest {
  authorization: string | undefined;
  fields: Record<string, string>;
  filename: string | undefined;
  fileContentType: string | undefined;
  wav: ParsedWav | null;
  wavError: string | null;
}

export interface ChatRequest {
  authorization: string | undefined;
  body: Record<string, unknown>;
}

/** How the fake answers one chat request. */
export interface ChatScript {
  /** Answer this status with an OpenAI error body instead of a stream. */
  status?: number;
  /** The `data:` payloads, in order (objects are JSON-encoded). */
  events?: Array<Record<string, unknown> | string>;
  /** After the events: `done` sends [DONE] and ends (default); `end` ends without [DONE]; `stall` keeps the stream open silently; `drop` destroys the socket. */
  then?: 'done' | 'end' | 'stall' | 'drop';
  /** Pause between events, ms. */
  delayMs?: number;
}

export interface OpenAiFake {
  /** http://127.0.0.1:port/v1, for STT_URL and LLM_URL. */
  url: string;
  apiKey: string;
  transcriptions: TranscriptionRequest[];
  chats: ChatRequest[];
  /** Texts the next transcriptions answer, in order (then ""). */
  transcripts: string[];
  /** Statuses the next transcriptions answer instead (in order). */
  transcriptionFailures: number[];
  /** Scripts of the next chat answers, in order (then a short text answer). */
  chatScripts: ChatScript[];
  /** Chat streams currently open (stalled ones stay until the client leaves). */
  openStreams(): number;
  /** Milliseconds before the first event of every streamed chat answer (a model's time to first token; 0 by default). */
  firstTokenDelayMs: number;
  close(): Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: 'chatcmpl-fake',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'fake-model',
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

/** Events of a text answer streamed a few characters at a time. */
export function textAnswer(text: string, piece = 4): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [chunk({ role: 'assistant', content: '' })];
  for (let i = 0; i < text.length; i += piece) events.push(chunk({ content: text.slice(i, i + piece) }));
  events.push(chunk({}, 'stop'));
  return events;
}

/** Events of tool calls streamed like OpenAI does: id and name first, then the arguments in fragments of `piece` characters. */
export function toolCallAnswer(
  calls: Array<{ id: string; name: string; arguments: string }>,
  options: { text?: string; piece?: number } = {},
): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = options.text
    ? textAnswer(options.text).slice(0, -1)
    : [chunk({ role: 'assistant', content: null })];
  calls.forEach((call, index) => {
    events.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    const piece = options.piece ?? 5;
    for (let i = 0; i < call.arguments.length; i += piece)
      events.push(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(i, i + piece) } }] }));
  });
  events.push(chunk({}, 'tool_calls'));
  return events;
}

/** Splits a multipart/form-data body into its parts. */
function parseMultipart(
  body: Buffer,
  contentType: string,
): Array<{ name: string; filename?: string; contentType?: string; data: Buffer }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!boundary) return [];
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const parts: Array<{ name: string; filename?: string; contentType?: string; data: Buffer }> = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(start + delimiter.length + 2, next - 2);
    const split = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, split).toString('utf8');
    const name = /name="([^"]*)"/i.exec(head)?.[1] ?? '';
    const filename = /filename="([^"]*)"/i.exec(head)?.[1];
    const type = /content-type:\s*([^\r\n]+)/i.exec(head)?.[1];
    parts.push({ name, filename, contentType: type, data: part.subarray(split + 4) });
    start = next;
  }
  return parts;
}

export async function startOpenAiFake(): Promise<OpenAiFake> {
  const apiKey = 'sk-fake-voice-0123456789';
  const transcriptions: TranscriptionRequest[] = [];
  const chats: ChatRequest[] = [];
  const transcripts: string[] = [];
  const transcriptionFailures: number[] = [];
  const chatScripts: ChatScript[] = [];
  const sockets = new Set<Socket>();
  let streams = 0;
  const fake = { firstTokenDelayMs: 0 };

  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const error = (res: ServerResponse, status: number, message: string) =>
    json(res, status, {
      error: { message, type: status === 401 ? 'invalid_request_error' : 'server_error', code: null },
    });

  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const piece of req) parts.push(piece as Buffer);
    const body = Buffer.concat(parts);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const authorization = req.headers.authorization;
    const authorised = authorization === `Bearer ${apiKey}`;

    if (req.method === 'POST' && url.pathname === '/v1/audio/transcriptions') {
      const fields: Record<string, string> = {};
      let file: { filename?: string; contentType?: string; data: Buffer } | null = null;
      for (const part of parseMultipart(body, req.headers['content-type'] ?? '')) {
        if (part.filename !== undefined) file = part;
        else fields[part.name] = part.data.toString('utf8');
      }
      let wav: ParsedWav | null = null;
      let wavError: string | null = null;
      try {
        wav = file ? parseWav(file.data) : null;
      } catch (e) {
        wavError = (e as Error).message;
      }
      transcriptions.push({
        authorization,
        fields,
        filename: file?.filename,
        fileContentType: file?.contentType,
        wav,
        wavError,
      });
      if (!authorised) return error(res, 401, 'Incorrect API key provided.');
      const failure = transcriptionFailures.shift();
      if (failure) return error(res, failure, `scripted failure ${failure}`);
      if (!file || !fields.model) return error(res, 400, 'file and model are required');
      if (wav?.format !== 1 || wav.bitsPerSample !== 16)
        return error(
          res,
          400,
          `the file is not a 16-bit PCM WAV (${wavError ?? `format ${wav?.format}, ${wav?.bitsPerSample} bits`})`,
        );
      return json(res, 200, { text: transcripts.shift() ?? '' });
    }

    if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return error(res, 400, 'invalid JSON');
      }
      chats.push({ authorization, body: parsed });
      if (!authorised) return error(res, 401, 'Incorrect API key provided.');
      if (parsed.stream !== true) return error(res, 400, 'this fake only streams');
      const script = chatScripts.shift() ?? { events: textAnswer('Sure.') };
      if (script.status) return error(res, script.status, `scripted failure ${script.status}`);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      streams += 1;
      res.on('close', () => (streams -= 1));
      if (fake.firstTokenDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.firstTokenDelayMs));
      for (const event of script.events ?? []) {
        if (script.delayMs) await new Promise((resolve) => setTimeout(resolve, script.delayMs));
        if (res.destroyed) return;
        res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
      }
      const then = script.then ?? 'done';
      if (then === 'stall') return;
      if (then === 'drop') return req.socket.destroy();
      if (then === 'done') res.write('data: [DONE]\n\n');
      return res.end();
    }
    error(res, 404, 'not found');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}/v1`,
    apiKey,
    transcriptions,
    chats,
    transcripts,
    transcriptionFailures,
    chatScripts,
    openStreams: () => streams,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
