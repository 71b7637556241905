// Builds the custom-tool service from the webhook service (the account's
// signing secret and address filter) and the same private-address policy
// webhook deliveries follow (WEBHOOK_ALLOW_PRIVATE, and always outside
// production). `stop` closes the sender's pooled connections (app close).
import type { Config } from '../../config.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { WebhookService } from '../webhooks/service.js';
import { type SendToolRequest, createToolSender } from './send.js';
import { CustomToolService } from './service.js';

export interface CustomToolServiceDeps {
  webhooks: Pick<WebhookService, 'ensureSecret' | 'signingSecrets' | 'checkUrl'>;
  secretBox: SecretBox;
  clock: Clock;
  /** The webhook deliveries' private-address setting (WEBHOOK_ALLOW_PRIVATE, webhooks.allowPrivate). */
  config: { webhooks: Pick<Config['webhooks'], 'allowPrivate'> };
  /** Replaces the HTTP sender (tests). */
  send?: SendToolRequest;
  log?: { warn(obj: unknown, msg: string): void };
}

export function createCustomToolServices(deps: CustomToolServiceDeps) {
  const sender = deps.send ? null : createToolSender({ allowPrivate: deps.config.webhooks.allowPrivate });
  const customTools = new CustomToolService({
    webhooks: deps.webhooks,
    secretBox: deps.secretBox,
    clock: deps.clock,
    send: deps.send ?? sender!.send,
    ...(deps.log ? { log: deps.log } : {}),
  });
  return { customTools, stop: async () => sender?.close() };
}

export type CustomToolServices = ReturnType<typeof createCustomToolServices>;
