import type { Outbox } from '../outbox.js';
import type { EmailMessage, EmailProvider } from './interface.js';

/** Offline stand-in: every email lands in the sandbox outbox. */
export class SandboxEmailProvider implements EmailProvider {
  readonly name = 'sandbox';
  readonly sandbox = true;
  constructor(private readonly outbox: Outbox) {}

  async send(message: EmailMessage) {
    const id = await this.outbox.add({
      channel: 'email',
      to: message.to,
      subject: message.subject,
      body: message.text,
      data: message.data ?? {},
    });
    return { id };
  }
}
