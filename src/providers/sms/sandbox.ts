import type { Outbox } from '../outbox.js';
import type { SmsMessage, SmsProvider, SmsResult } from './interface.js';

/** Offline stand-in: every message lands in the sandbox outbox as "sent". */
export class SandboxSmsProvider implements SmsProvider {
  readonly name = 'sandbox';
  readonly sandbox = true;
  constructor(private readonly outbox: Outbox) {}

  async send(message: SmsMessage): Promise<SmsResult> {
    const id = await this.outbox.add({ channel: 'sms', to: message.to, body: message.body, data: message.data ?? {} });
    return { id: `SM${id.replace(/-/g, '')}`, status: 'sent' };
  }
}
