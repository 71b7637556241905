// A local server speaking the part of Twilio's REST API the service uses:
// POST /2010-04-01/Accounts/{AccountSid}/Messages.json, form-encoded, with
// HTTP Basic auth (account SID : auth token). Answers like Twilio: 201 with
// the message resource, 401 / 400 / 404 with Twilio's error JSON. Every
// request is recorded.
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TwilioRequest {
  method: string;
  path: string;
  contentType: string | undefined;
  /** Decoded Basic credentials, or null when absent/malformed. */
  auth: { user: string; password: string } | null;
  form: Record<string, string>;
}

export interface TwilioMessage {
  sid: string;
  accountSid: string;
  to: string;
  from: string;
  body: string;
  statusCallback: string | null;
}

export interface TwilioFake {
  /** e.g. http://127.0.0.1:41234 — the provider's apiBase. */
  apiBase: string;
  accountSid: string;
  authToken: string;
  from: string;
  /** Every request received, in order. */
  requests: TwilioRequest[];
  /** Messages accepted (201), in order. */
  messages: TwilioMessage[];
  /** Makes the next sends fail like Twilio does for a refused recipient (400, code 21211). */
  failNext(count?: number): void;
  close(): Promise<void>;
}

const twilioError = (res: ServerResponse, status: number, code: number, message: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
};

function parseBasic(header: string | undefined): TwilioRequest['auth'] {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startTwilioFake(options: { accountSid?: string; authToken?: string; from?: string } = {}): Promise<TwilioFake> {
  const accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
  const authToken = options.authToken ?? randomBytes(16).toString('hex');
  const from = options.from ?? '+15005550006';
  const requests: TwilioRequest[] = [];
  const messages: TwilioMessage[] = [];
  let failures = 0;

  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const text = await readBody(req);
    const form = Object.fromEntries(new URLSearchParams(text));
    const auth = parseBasic(req.headers.authorization);
    requests.push({ method: req.method ?? '', path, contentType: req.headers['content-type'], auth, form });

    const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(path);
    if (!match || req.method !== 'POST') return twilioError(res, 404, 20404, 'The requested resource was not found');
    if (!auth || auth.user !== accountSid || auth.password !== authToken || decodeURIComponent(match[1]) !== accountSid) {
      res.setHeader('www-authenticate', 'Basic realm="Twilio API"');
      return twilioError(res, 401, 20003, 'Authenticate');
    }
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return twilioError(res, 400, 20001, 'Invalid content type');
    }
    if (!form.To) return twilioError(res, 400, 21604, "A 'To' phone number is required.");
    if (!form.From) return twilioError(res, 400, 21603, "A 'From' phone number is required.");
    if (!form.Body) return twilioError(res, 400, 21602, 'Message body is required.');
    if (failures > 0) {
      failures -= 1;
      return twilioError(res, 400, 21211, `The 'To' number ${form.To} is not a valid phone number.`);
    }
    const sid = `SM${randomBytes(16).toString('hex')}`;
    messages.push({ sid, accountSid, to: form.To, from: form.From, body: form.Body, statusCallback: form.StatusCallback ?? null });
    const now = new Date().toUTCString();
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        sid,
        account_sid: accountSid,
        api_version: '2010-04-01',
        to: form.To,
        from: form.From,
        body: form.Body,
        status: 'queued',
        num_segments: '1',
        direction: 'outbound-api',
        date_created: now,
        date_updated: now,
        date_sent: null,
        error_code: null,
        error_message: null,
        price: null,
        price_unit: 'USD',
        uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    apiBase: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    from,
    requests,
    messages,
    failNext(count = 1) {
      failures += count;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
