// Any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM, TEI,
// LocalAI): POST {EMBEDDINGS_URL}/embeddings { model, input: [...] }.
// The URL is the operator's, so private addresses are allowed (a model
// server on localhost is the usual case); the client is still the shared one,
// with its deadline and size cap.
import { AppError } from '../../http/errors.js';
import { type OutboundHttp, OutboundHttpError, createOutboundHttp } from '../../lib/outbound-http.js';
import { type EmbeddingsProvider, unitVector } from './interface.js';

export interface OpenAiEmbeddingsConfig {
  url: string;
  model: string;
  apiKey: string | null;
  /** Texts per request. */
  batchSize?: number;
}

interface EmbeddingsAnswer {
  data?: Array<{ embedding?: unknown; index?: number }>;
}

export class OpenAiEmbeddingsProvider implements EmbeddingsProvider {
  readonly name: string;
  private readonly endpoint: string;
  private readonly http: OutboundHttp;

  constructor(private readonly config: OpenAiEmbeddingsConfig) {
    const base = config.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/embeddings') ? base : `${base}/embeddings`;
    this.name = `OpenAI-compatible embeddings at ${this.endpoint} (${config.model})`;
    this.http = createOutboundHttp({ allowPrivate: true, timeoutMs: 60_000, maxBytes: 256 * 1024 * 1024 });
  }

  async embed(texts: string[]): Promise<number[][]> {
    const size = this.config.batchSize ?? 64;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.embedBatch(texts.slice(i, i + size))));
    return out;
  }

  private async embedBatch(input: string[]): Promise<number[][]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    let answer: EmbeddingsAnswer;
    try {
      const res = await this.http(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.config.model, input }),
      });
      if (!res.ok) throw new AppError('provider_error', `the embeddings provider answered ${res.status}`);
      answer = (await res.json()) as EmbeddingsAnswer;
    } catch (error) {
      if (error instanceof AppError) throw error;
      const detail = error instanceof OutboundHttpError ? error.message : 'invalid answer';
      throw new AppError('provider_error', `the embeddings provider failed: ${detail}`);
    }
    const data = answer.data;
    if (!Array.isArray(data) || data.length !== input.length)
      throw new AppError('provider_error', 'the embeddings provider returned the wrong number of vectors');
    const vectors: number[][] = new Array(input.length);
    data.forEach((item, position) => {
      const index = typeof item.index === 'number' ? item.index : position;
      const embedding = item.embedding;
      if (
        !Array.isArray(embedding) ||
        embedding.length === 0 ||
        !embedding.every((v) => typeof v === 'number' && Number.isFinite(v)) ||
        index < 0 ||
        index >= input.length
      ) {
        throw new AppError('provider_error', 'the embeddings provider returned an invalid vector');
      }
      vectors[index] = unitVector(embedding as number[]);
    });
    if (vectors.some((v) => !v) || new Set(vectors.map((v) => v.length)).size !== 1)
      throw new AppError('provider_error', 'the embeddings provider returned inconsistent vectors');
    return vectors;
  }

  close(): Promise<void> {
    return this.http.close();
  }
}
