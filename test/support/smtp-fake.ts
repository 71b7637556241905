// A real SMTP server (the `smtp-server` package) on 127.0.0.1 that keeps every
// message it accepts, with enough MIME parsing (headers, quoted-printable /
// base64 text bodies) for tests to read the To, Subject and text.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedEmail {
  /** SMTP envelope. */
  mailFrom: string;
  rcptTo: string[];
  /** Header names lower-cased, folded lines joined. */
  headers: Record<string, string>;
  subject: string;
  to: string;
  from: string;
  /** The decoded text/plain body. */
  text: string;
  raw: string;
}

export interface SmtpFake {
  port: number;
  /** smtp://127.0.0.1:<port>?ignoreTLS=true — plain SMTP without STARTTLS, as nodemailer reads it. */
  url: string;
  messages: ReceivedEmail[];
  /** Resolves once `count` messages have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedEmail[]>;
  /** Makes the next messages be refused with 550 at the end of DATA. */
  refuseNext(count?: number): void;
  close(): Promise<void>;
}

function decodeQuotedPrintable(text: string): string {
  const joined = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined.slice(i + 1, i + 3);
    if (joined[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(joined[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function parseHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return headers;
}

function decodeBody(headers: Record<string, string>, body: string): string {
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** Headers and decoded text of a message; for multipart, the first text/plain part. */
export function parseEmail(raw: string): { headers: Record<string, string>; text: string } {
  const split = raw.search(/\r?\n\r?\n/);
  const headers = parseHeaders(raw.slice(0, split));
  const body = raw.slice(split).replace(/^\r?\n\r?\n/, '');
  const boundary = /multipart\/[^;]+;.*boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (!boundary) return { headers, text: decodeBody(headers, body) };
  for (const part of body.split(`--${boundary}`).slice(1)) {
    if (part.startsWith('--')) break;
    const inner = parseEmail(part.replace(/^\r?\n/, ''));
    if ((inner.headers['content-type'] ?? 'text/plain').startsWith('text/plain')) return { headers, text: inner.text };
  }
  return { headers, text: '' };
}

export async function startSmtpFake(): Promise<SmtpFake> {
  const messages: ReceivedEmail[] = [];
  const waiters: Array<() => void> = [];
  let refusals = 0;

  const server = new SMTPServer({
    authOptional: true,
    disableReverseLookup: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (refusals > 0) {
          refusals -= 1;
          const err = Object.assign(new Error('mailbox unavailable'), { responseCode: 550 });
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const { headers, text } = parseEmail(raw);
        messages.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          headers,
          subject: headers.subject ?? '',
          to: headers.to ?? '',
          from: headers.from ?? '',
          text,
          raw,
        });
        callback();
        for (const wake of waiters.splice(0)) wake();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;

  return {
    port,
    url: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
    messages,
    waitFor(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`expected ${count} emails, got ${messages.length}`)),
          timeoutMs,
        );
        const check = () => {
          if (messages.length >= count) {
            clearTimeout(timer);
            resolve(messages.slice(0, count));
          } else waiters.push(check);
        };
        check();
      });
    },
    refuseNext(count = 1) {
      refusals += count;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
