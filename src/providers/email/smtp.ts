import { createRequire } from 'node:module';
import type { Transporter } from 'nodemailer';
import type nodemailerModule from 'nodemailer';
import { AppError } from '../../http/errors.js';
import type { EmailMessage, EmailProvider } from './interface.js';

/** Sends through any SMTP server (SMTP_URL, e.g. smtp://user:pass@host:587). */
export class SmtpEmailProvider implements EmailProvider {
  readonly name = 'smtp';
  readonly sandbox = false;
  private readonly transport: Transporter;
  constructor(
    url: string,
    private readonly from: string,
  ) {
    // Loaded only when SMTP is configured: the sandbox default never needs it.
    const nodemailer = createRequire(import.meta.url)('nodemailer') as typeof nodemailerModule;
    this.transport = nodemailer.createTransport(url);
  }

  async send(message: EmailMessage) {
    try {
      const info = await this.transport.sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
      return { id: String(info.messageId) };
    } catch (err) {
      throw new AppError('provider_error', `email could not be sent: ${(err as Error).message}`);
    }
  }

  close() {
    this.transport.close();
  }
}
