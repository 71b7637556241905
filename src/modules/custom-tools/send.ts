// The one place a custom tool's request leaves the machine. As for webhook
// deliveries (src/modules/webhooks/send.ts, whose client construction this
// reuses): the outbound client checks every address it connects to (after
// DNS) unless private targets are allowed, follows no redirect, and caps the
// answer's size. The deadline is the caller's signal, so one pooled client
// serves every tool whatever its timeout.
import { OutboundHttpError, type OutboundHttpOptions, readBody } from '../../lib/outbound-http.js';
import type { WebhookHeaders } from '../../lib/standard-webhooks.js';
import { createCustomerEndpointHttp } from '../webhooks/send.js';
import { MAX_TIMEOUT_MS } from './declaration.js';
import type { ToolRequest } from './request.js';

/** Answers larger than this are a tool error (they go back to the model whole). */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface ToolAnswer {
  status: number;
  body: Buffer;
}

/** One attempt; failures to get an answer throw OutboundHttpError (an abort of `signal` throws its reason). */
export type SendToolRequest = (
  request: ToolRequest,
  headers: WebhookHeaders & Record<string, string>,
  signal: AbortSignal,
) => Promise<ToolAnswer>;

export interface ToolSender {
  send: SendToolRequest;
  /** Closes the pooled connections (app close). */
  close(): Promise<void>;
}

export function createToolSender(options: { allowPrivate: boolean } & Pick<OutboundHttpOptions, 'lookup'>): ToolSender {
  // The client's own limits are the longest a tool may take; each request's signal ends it sooner.
  const http = createCustomerEndpointHttp({
    ...options,
    timeoutMs: MAX_TIMEOUT_MS,
    maxBytes: MAX_ANSWER_BYTES,
    userAgent: 'workspace-api-tools/1',
  });
  return {
    send: async (request, headers, signal) => {
      try {
        const response = await http(request.url, {
          method: request.method,
          headers: {
            accept: 'application/json',
            ...(request.body !== null ? { 'content-type': 'application/json' } : {}),
            ...headers,
          },
          ...(request.body !== null ? { body: request.body } : {}),
          signal,
        });
        return { status: response.status, body: await readBody(response) };
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        throw err instanceof OutboundHttpError
          ? err
          : new OutboundHttpError('network', `the request failed (${(err as Error)?.message ?? String(err)})`, {
              cause: err,
            });
      }
    },
    close: () => http.close(),
  };
}
