// A local server speaking OpenAI's embeddings API (POST /v1/embeddings
// { model, input } → { object: "list", data: [{ object, index, embedding }],
// model, usage }). Vectors are deterministic: each word (after a small synonym
// table, so "automobile" lands where "car" does) is hashed to a signed
// dimension of a 64-dimensional vector. Texts sharing meaning-words are near;
// synonyms are near although full-text search cannot match them.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_DIMENSIONS = 64;

const SYNONYMS: Record<string, string> = {
  automobile: 'car',
  vehicle: 'car',
  cars: 'car',
  physician: 'doctor',
  medic: 'doctor',
  refund: 'reimbursement',
  money: 'reimbursement',
  back: 'reimbursement',
};

const STOP = new Set([
  'the',
  'a',
  'an',
  'of',
  'to',
  'is',
  'my',
  'i',
  'how',
  'do',
  'get',
  'for',
  'and',
  'in',
  'on',
  'what',
  'can',
]);

function hash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i += 1) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function fakeEmbedding(text: string): number[] {
  const v = new Array<number>(FAKE_DIMENSIONS).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(raw)) continue;
    const word = SYNONYMS[raw] ?? raw;
    const h = hash(word);
    v[h % FAKE_DIMENSIONS] += h & 0x100 ? 1 : -1;
  }
  // Not normalized on purpose: the provider must scale vectors itself.
  return v.map((x) => x * 3);
}

export interface EmbeddingsFake {
  /** The base URL to set as EMBEDDINGS_URL (…/v1). */
  url: string;
  requests: Array<{ model: string; input: string[]; authorization?: string }>;
  /** Makes the next requests answer 500. */
  failNext(count?: number): void;
  close(): Promise<void>;
}

export async function startEmbeddingsFake(): Promise<EmbeddingsFake> {
  const requests: EmbeddingsFake['requests'] = [];
  let failures = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.method !== 'POST' || req.url !== '/v1/embeddings')
        return send(404, { error: { message: 'not found', type: 'invalid_request_error' } });
      let parsed: { model?: unknown; input?: unknown };
      try {
        parsed = JSON.parse(body);
      } catch {
        return send(400, { error: { message: 'invalid JSON', type: 'invalid_request_error' } });
      }
      const input = typeof parsed.input === 'string' ? [parsed.input] : parsed.input;
      if (typeof parsed.model !== 'string' || !Array.isArray(input) || !input.every((s) => typeof s === 'string')) {
        return send(400, { error: { message: "'model' and 'input' are required", type: 'invalid_request_error' } });
      }
      requests.push({ model: parsed.model, input, authorization: req.headers.authorization });
      if (failures > 0) {
        failures -= 1;
        return send(500, { error: { message: 'overloaded', type: 'server_error' } });
      }
      send(200, {
        object: 'list',
        data: input.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text) })),
        model: parsed.model,
        usage: {
          prompt_tokens: input.join(' ').split(/\s+/).length,
          total_tokens: input.join(' ').split(/\s+/).length,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    failNext: (count = 1) => void (failures = count),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
