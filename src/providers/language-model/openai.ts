// Any OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp):
// POST {LLM_URL}/chat/completions with `stream: true` and the call's tools.
// The answer is Server-Sent Events, one `data:` JSON chunk per event and
// `data: [DONE]` at the end. Text deltas are yielded as they arrive (the
// pipeline speaks the first sentence before the last is written); tool calls
// arrive in pieces (an index, then an id and name, then fragments of the
// JSON arguments) and are yielded whole once the answer finishes.
import { randomBytes } from 'node:crypto';
import { type OutboundHttp, createOperatorHttp } from '../../lib/outbound-http.js';
import { ProviderFailure } from '../failure.js';
import { retryableStatus } from '../speech-to-text/openai.js';
import type { ChatToolCall, CompletionRequest, LanguageModel, ModelDelta } from './interface.js';

export interface OpenAiLanguageModelConfig {
  /** API base in the OpenAI SDK's sense (https://api.openai.com/v1, http://localhost:11434/v1). */
  url: string;
  apiKey: string | null;
  model: string;
  /** Longest silence of the server (before its headers, between chunks) before the answer fails (default 30 s). */
  idleTimeoutMs?: number;
  /** Upper bound of one answer's tokens (spoken replies are short). */
  maxTokens?: number;
  temperature?: number;
}

const PROVIDER = 'openai';

/** One streamed chunk (the fields we read). */
interface ChatChunk {
  choices?: Array<{
    delta?: {
      content?: string | null;
      tool_calls?: Array<{
        index?: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }>;
    };
    finish_reason?: string | null;
  }>;
  error?: { message?: unknown };
}

export class OpenAiLanguageModel implements LanguageModel {
  readonly name = PROVIDER;
  readonly sandbox = false;
  private readonly endpoint: string;
  private readonly http: OutboundHttp;

  constructor(private readonly config: OpenAiLanguageModelConfig) {
    const base = config.url.replace(/\/+$/, '');
    this.endpoint = base.endsWith('/chat/completions') ? base : `${base}/chat/completions`;
    // No deadline for the whole answer (the caller's signal is it); the idle timeout bounds a silent server.
    this.http = createOperatorHttp({
      timeoutMs: config.idleTimeoutMs ?? 30_000,
      deadlineMs: null,
      maxBytes: 4 * 1024 * 1024,
    });
  }

  /** The request body for a completion: OpenAI's shapes, which the compatible servers share. */
  requestBody(request: Omit<CompletionRequest, 'signal'>): Record<string, unknown> {
    const body: Record<string, unknown> = { model: this.config.model, messages: request.messages, stream: true };
    // Some servers refuse an empty `tools` array: send it only when there are tools.
    if (request.tools.length)
      body.tools = request.tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
    if (request.toolChoice) body.tool_choice = { type: 'function', function: { name: request.toolChoice } };
    if (this.config.maxTokens) body.max_tokens = this.config.maxTokens;
    if (this.config.temperature !== undefined) body.temperature = this.config.temperature;
    return body;
  }

  async *complete(request: CompletionRequest): AsyncIterable<ModelDelta> {
    const { signal } = request;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream' };
    if (this.config.apiKey) headers.authorization = `Bearer ${this.config.apiKey}`;
    const aborted = () => new ProviderFailure(PROVIDER, 'the answer was cancelled');

    let res: Response;
    try {
      res = await this.http(this.endpoint, {
        method: 'POST',
        headers,
        body: JSON.stringify(this.requestBody(request)),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw aborted();
      throw new ProviderFailure(PROVIDER, `request failed: ${(error as Error).message}`);
    }
    if (!res.ok || !res.body) {
      const answer = (await res.json().catch(() => null)) as ChatChunk | null;
      const detail = typeof answer?.error?.message === 'string' ? `: ${answer.error.message.slice(0, 200)}` : '';
      throw new ProviderFailure(
        PROVIDER,
        `the model refused (HTTP ${res.status}${detail})`,
        retryableStatus(res.status),
      );
    }

    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    let finishReason: string | null = null;
    let sawDone = false;
    const finished = function* (): Generator<ModelDelta> {
      for (const index of [...calls.keys()].sort((a, b) => a - b)) {
        const c = calls.get(index)!;
        const call: ChatToolCall = {
          id: c.id || `call_${randomBytes(12).toString('hex')}`,
          type: 'function',
          function: { name: c.name, arguments: c.arguments || '{}' },
        };
        yield { type: 'tool_call', call };
      }
      yield { type: 'done', finishReason: finishReason ?? (calls.size ? 'tool_calls' : 'stop') };
    };

    try {
      for await (const data of serverSentData(res.body)) {
        if (data === '[DONE]') {
          sawDone = true;
          break;
        }
        let chunk: ChatChunk;
        try {
          chunk = JSON.parse(data) as ChatChunk;
        } catch {
          throw new ProviderFailure(PROVIDER, 'the answer stream carried a chunk that is not JSON');
        }
        if (chunk.error)
          throw new ProviderFailure(
            PROVIDER,
            `the model failed mid-answer${typeof chunk.error.message === 'string' ? `: ${chunk.error.message.slice(0, 200)}` : ''}`,
          );
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const content = choice.delta?.content;
        if (typeof content === 'string' && content) yield { type: 'text', text: content };
        for (const piece of choice.delta?.tool_calls ?? []) {
          const index = piece.index ?? 0;
          const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name += piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
          calls.set(index, call);
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
    } catch (error) {
      if (signal.aborted) throw aborted();
      if (error instanceof ProviderFailure) throw error;
      throw new ProviderFailure(PROVIDER, `the answer stream broke: ${(error as Error).message}`);
    }
    if (signal.aborted) throw aborted();
    // Without [DONE] or a finish reason the answer was cut short: its tool calls may be incomplete.
    if (!sawDone && !finishReason) throw new ProviderFailure(PROVIDER, 'the answer stream ended early');
    yield* finished();
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** The `data` of each Server-Sent Event, in order (multi-line data joined with \n; comments and other fields skipped). */
export async function* serverSentData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        // A \r at the end may be half of a \r\n split between chunks: wait for the next one.
        if (!done && newline === buffer.length - 1 && buffer.endsWith('\r')) break;
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
        if (line === '') {
          if (data.length) yield data.join('\n');
          data = [];
        } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
      if (done) break;
    }
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5));
    if (data.length) yield data.join('\n');
  } finally {
    reader.cancel().catch(() => {});
  }
}
