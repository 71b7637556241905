// The OpenAI-compatible embeddings adapter against local servers: the real
// protocol through the fake, and malformed answers from a server that lies.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { OpenAiEmbeddingsProvider } from '../../src/providers/embeddings/openai.js';
import { type EmbeddingsFake, FAKE_DIMENSIONS, startEmbeddingsFake } from '../support/embeddings-fake.js';

let fake: EmbeddingsFake;
let liar: Server;
let liarUrl: string;
let answer: unknown = {};

beforeAll(async () => {
  fake = await startEmbeddingsFake();
  liar = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
  liarUrl = `http://127.0.0.1:${(liar.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await fake.close();
  liar.closeAllConnections();
  await new Promise((resolve) => liar.close(resolve));
});

describe('OpenAiEmbeddingsProvider', () => {
  it('sends batches to {url}/embeddings and returns unit vectors in input order', async () => {
    const provider = new OpenAiEmbeddingsProvider({ url: `${fake.url}/`, model: 'm', apiKey: null, batchSize: 2 });
    const before = fake.requests.length;
    const vectors = await provider.embed(['car engine', 'doctor visit', 'automobile engine']);
    expect(fake.requests.slice(before).map((r) => r.input)).toEqual([
      ['car engine', 'doctor visit'],
      ['automobile engine'],
    ]);
    expect(fake.requests[before].authorization).toBeUndefined();
    expect(vectors).toHaveLength(3);
    for (const v of vectors) {
      expect(v).toHaveLength(FAKE_DIMENSIONS);
      expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    }
    // Synonyms meet in the fake's space: "automobile engine" equals "car engine".
    expect(vectors[2]).toEqual(vectors[0]);
    await provider.close();
  });

  it('accepts a URL that already ends in /embeddings', async () => {
    const provider = new OpenAiEmbeddingsProvider({ url: `${fake.url}/embeddings`, model: 'm', apiKey: 'sk' });
    expect(await provider.embed(['x'])).toHaveLength(1);
    expect(fake.requests.at(-1)?.authorization).toBe('Bearer sk');
    await provider.close();
  });

  it.each([
    ['an error status', null],
    ['too few vectors', { data: [{ index: 0, embedding: [1, 2] }] }],
    [
      'a non-numeric vector',
      {
        data: [
          { index: 0, embedding: ['a'] },
          { index: 1, embedding: [1] },
        ],
      },
    ],
    [
      'vectors of different lengths',
      {
        data: [
          { index: 0, embedding: [1, 2] },
          { index: 1, embedding: [1] },
        ],
      },
    ],
    [
      'an index out of range',
      {
        data: [
          { index: 0, embedding: [1] },
          { index: 5, embedding: [1] },
        ],
      },
    ],
    ['no data', { object: 'list' }],
  ])('answers provider_error (502) for %s', async (_name, body) => {
    const provider =
      body === null
        ? new OpenAiEmbeddingsProvider({ url: fake.url, model: 'm', apiKey: null })
        : new OpenAiEmbeddingsProvider({ url: liarUrl, model: 'm', apiKey: null });
    if (body === null) fake.failNext(1);
    answer = body;
    const error = await provider.embed(['one', 'two']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('provider_error');
    expect((error as AppError).status).toBe(502);
    await provider.close();
  });
});
