// A local server speaking the part of Twilio's REST API the service uses,
// under /2010-04-01/Accounts/{AccountSid}: Messages.json, AvailablePhoneNumbers
// (countries, Local/Mobile/TollFree search), IncomingPhoneNumbers (buy,
// update, release) and Addresses.json; form-encoded, with HTTP Basic auth
// (account SID : auth token). Answers like Twilio: 201/200/204 with its
// resource shapes, 401 / 400 / 404 with Twilio's error JSON. Every request is
// recorded. Like Twilio, it can POST signed status callbacks for a message.
import { randomBytes } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import twilio from 'twilio';

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

export interface TwilioCall {
  sid: string;
  to: string;
  from: string;
  twiml: string;
  statusCallback: string | null;
  /** Every StatusCallbackEvent value sent (the parameter repeats). */
  statusCallbackEvents: string[];
  machineDetection: string | null;
  amdCallback: string | null;
  timeLimit: string | null;
  /** TwiML the call was redirected to, in order (transfers, spoken goodbyes). */
  redirects: string[];
  status: 'queued' | 'completed';
}

export interface TwilioIncomingNumber {
  sid: string;
  phoneNumber: string;
  friendlyName: string;
  addressSid: string | null;
  voiceUrl: string;
}

export interface TwilioAddress {
  sid: string;
  params: Record<string, string>;
}

/** A number the fake offers: country, Twilio resource (Local, Mobile, TollFree) and Twilio's fields. */
export interface TwilioOffer {
  country: string;
  resource: 'Local' | 'Mobile' | 'TollFree';
  phoneNumber: string;
  addressRequirements: 'none' | 'any' | 'local' | 'foreign';
  voice: boolean;
}

export const DEFAULT_OFFERS: TwilioOffer[] = [
  ...Array.from(
    { length: 6 },
    (_, i): TwilioOffer => ({
      country: 'US',
      resource: 'Local',
      phoneNumber: `+1415555020${i}`,
      addressRequirements: 'none',
      voice: i !== 5,
    }),
  ),
  { country: 'US', resource: 'TollFree', phoneNumber: '+18005550199', addressRequirements: 'none', voice: true },
  { country: 'GB', resource: 'Local', phoneNumber: '+442079460111', addressRequirements: 'any', voice: true },
  { country: 'DE', resource: 'Mobile', phoneNumber: '+4915770000111', addressRequirements: 'foreign', voice: false },
];

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
  /** Calls placed through Calls.json, in order. */
  calls: TwilioCall[];
  /** Numbers bought and not released, by sid. */
  incoming: Map<string, TwilioIncomingNumber>;
  addresses: TwilioAddress[];
  offers: TwilioOffer[];
  /** Makes the next sends fail like Twilio does for a refused recipient (400, code 21211). */
  failNext(count?: number): void;
  /** Makes the next request whose method and path match fail with this Twilio error. */
  failRequest(method: string, pathPattern: RegExp, status: number, code: number, message: string): void;
  /** POSTs form `params` to `url` signed like Twilio with the auth token (voice webhooks, call and AMD callbacks); answers status and body. */
  postSigned(url: string, params: Record<string, string>): Promise<{ status: number; body: string }>;
  /** POSTs a status callback for an accepted message, signed like Twilio with the auth token; answers the HTTP status. */
  sendStatusCallback(sid: string, status: string, extra?: Record<string, string>): Promise<number>;
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

export async function startTwilioFake(
  options: { accountSid?: string; authToken?: string; from?: string } = {},
): Promise<TwilioFake> {
  const accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
  const authToken = options.authToken ?? randomBytes(16).toString('hex');
  const from = options.from ?? '+15005550006';
  const requests: TwilioRequest[] = [];
  const messages: TwilioMessage[] = [];
  const calls: TwilioCall[] = [];
  let failures = 0;
  const incoming = new Map<string, TwilioIncomingNumber>();
  const addresses: TwilioAddress[] = [];
  const offers = [...DEFAULT_OFFERS];
  const planned: Array<{ method: string; pattern: RegExp; status: number; code: number; message: string }> = [];
  const base = (sid: string) => `/2010-04-01/Accounts/${sid}`;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const server = createServer(async (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const text = await readBody(req);
    const params = new URLSearchParams(text);
    const form = Object.fromEntries(params);
    const auth = parseBasic(req.headers.authorization);
    requests.push({ method: req.method ?? '', path, contentType: req.headers['content-type'], auth, form });

    const account = /^\/2010-04-01\/Accounts\/([^/]+)(\/.*)$/.exec(path);
    if (!account) return twilioError(res, 404, 20404, 'The requested resource was not found');
    if (
      !auth ||
      auth.user !== accountSid ||
      auth.password !== authToken ||
      decodeURIComponent(account[1]) !== accountSid
    ) {
      res.setHeader('www-authenticate', 'Basic realm="Twilio API"');
      return twilioError(res, 401, 20003, 'Authenticate');
    }
    if (req.method === 'POST' && !req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return twilioError(res, 400, 20001, 'Invalid content type');
    }
    const resource = account[2];
    const plannedIndex = planned.findIndex((p) => p.method === req.method && p.pattern.test(resource));
    if (plannedIndex >= 0) {
      const [p] = planned.splice(plannedIndex, 1);
      return twilioError(res, p.status, p.code, p.message);
    }
    const query = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
    if (resource.startsWith('/Calls')) return handleCalls(req.method ?? '', resource, form, params, res);
    if (resource !== '/Messages.json') return handleNumbers(req.method ?? '', resource, form, query, res);
    if (req.method !== 'POST') return twilioError(res, 404, 20404, 'The requested resource was not found');
    if (!form.To) return twilioError(res, 400, 21604, "A 'To' phone number is required.");
    if (!form.From) return twilioError(res, 400, 21603, "A 'From' phone number is required.");
    if (!form.Body) return twilioError(res, 400, 21602, 'Message body is required.');
    if (failures > 0) {
      failures -= 1;
      return twilioError(res, 400, 21211, `The 'To' number ${form.To} is not a valid phone number.`);
    }
    const sid = `SM${randomBytes(16).toString('hex')}`;
    messages.push({
      sid,
      accountSid,
      to: form.To,
      from: form.From,
      body: form.Body,
      statusCallback: form.StatusCallback ?? null,
    });
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

  function callResource(c: TwilioCall) {
    return {
      sid: c.sid,
      account_sid: accountSid,
      to: c.to,
      from: c.from,
      status: c.status,
      direction: 'outbound-api',
      uri: `${base(accountSid)}/Calls/${c.sid}.json`,
    };
  }

  function handleCalls(
    method: string,
    resource: string,
    form: Record<string, string>,
    params: URLSearchParams,
    res: ServerResponse,
  ) {
    if (method === 'POST' && resource === '/Calls.json') {
      if (!form.To) return twilioError(res, 400, 21201, "No 'To' number is specified");
      if (!form.From) return twilioError(res, 400, 21213, "No 'From' number is specified");
      if (!form.Twiml && !form.Url) return twilioError(res, 400, 21205, 'Url or Twiml parameter is required');
      const call: TwilioCall = {
        sid: `CA${randomBytes(16).toString('hex')}`,
        to: form.To,
        from: form.From,
        twiml: form.Twiml ?? '',
        statusCallback: form.StatusCallback ?? null,
        statusCallbackEvents: params.getAll('StatusCallbackEvent'),
        machineDetection: form.MachineDetection ?? null,
        amdCallback: form.AsyncAmdStatusCallback ?? null,
        timeLimit: form.TimeLimit ?? null,
        redirects: [],
        status: 'queued',
      };
      calls.push(call);
      return json(res, 201, callResource(call));
    }
    const one = /^\/Calls\/(CA[0-9a-f]+)\.json$/.exec(resource);
    const call = one && calls.find((c) => c.sid === one[1]);
    if (method === 'POST' && call) {
      if (call.status === 'completed') return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
      if (form.Twiml) call.redirects.push(form.Twiml);
      if (form.Status === 'completed') call.status = 'completed';
      return json(res, 200, callResource(call));
    }
    return twilioError(res, 404, 20404, 'The requested resource was not found');
  }

  function offerResource(o: TwilioOffer) {
    return {
      friendly_name: o.phoneNumber,
      phone_number: o.phoneNumber,
      lata: null,
      locality: o.country === 'US' ? 'San Francisco' : null,
      rate_center: null,
      latitude: null,
      longitude: null,
      region: o.country === 'US' ? 'CA' : null,
      postal_code: null,
      iso_country: o.country,
      address_requirements: o.addressRequirements,
      beta: false,
      capabilities: { voice: o.voice, SMS: true, MMS: o.country === 'US', fax: false },
    };
  }

  function incomingResource(n: TwilioIncomingNumber, status = 'in-use') {
    const offer = offers.find((o) => o.phoneNumber === n.phoneNumber);
    return {
      sid: n.sid,
      account_sid: accountSid,
      friendly_name: n.friendlyName,
      phone_number: n.phoneNumber,
      voice_url: n.voiceUrl,
      voice_method: 'POST',
      address_sid: n.addressSid,
      address_requirements: offer?.addressRequirements ?? 'none',
      capabilities: { voice: offer?.voice ?? true, sms: true, mms: false, fax: false },
      status,
      uri: `${base(accountSid)}/IncomingPhoneNumbers/${n.sid}.json`,
    };
  }

  function handleNumbers(
    method: string,
    resource: string,
    form: Record<string, string>,
    query: Record<string, string>,
    res: ServerResponse,
  ) {
    if (method === 'GET' && resource === '/AvailablePhoneNumbers.json') {
      const countries = [...new Set(offers.map((o) => o.country))];
      return json(res, 200, {
        available_phone_numbers: countries.map((country) => ({
          country_code: country,
          country,
          beta: false,
          uri: `${base(accountSid)}/AvailablePhoneNumbers/${country}.json`,
          subresource_uris: Object.fromEntries(
            [...new Set(offers.filter((o) => o.country === country).map((o) => o.resource))].map((r) => [
              r === 'TollFree' ? 'toll_free' : r.toLowerCase(),
              `${base(accountSid)}/AvailablePhoneNumbers/${country}/${r}.json`,
            ]),
          ),
        })),
        uri: `${base(accountSid)}/AvailablePhoneNumbers.json`,
      });
    }
    const search = /^\/AvailablePhoneNumbers\/([A-Z]{2})\/(Local|Mobile|TollFree)\.json$/.exec(resource);
    if (method === 'GET' && search) {
      const owned = new Set([...incoming.values()].map((n) => n.phoneNumber));
      const matching = offers.filter(
        (o) =>
          o.country === search[1] &&
          o.resource === search[2] &&
          !owned.has(o.phoneNumber) &&
          (!query.Contains || o.phoneNumber.includes(query.Contains)),
      );
      if (!offers.some((o) => o.country === search[1] && o.resource === search[2]))
        return twilioError(res, 404, 20404, 'The requested resource was not found');
      return json(res, 200, {
        available_phone_numbers: matching.slice(0, Number(query.PageSize ?? 50)).map(offerResource),
        uri: `${base(accountSid)}${resource}`,
      });
    }
    if (method === 'POST' && resource === '/Addresses.json') {
      for (const name of ['CustomerName', 'Street', 'City', 'Region', 'PostalCode', 'IsoCountry']) {
        if (!form[name]) return twilioError(res, 400, 21604, `${name} is required.`);
      }
      if (form.PostalCode === '00000') return twilioError(res, 400, 21628, 'Address Validation Error');
      const sid = `AD${randomBytes(16).toString('hex')}`;
      addresses.push({ sid, params: form });
      return json(res, 201, {
        sid,
        account_sid: accountSid,
        customer_name: form.CustomerName,
        street: form.Street,
        city: form.City,
        region: form.Region,
        postal_code: form.PostalCode,
        iso_country: form.IsoCountry,
        validated: true,
        verified: false,
      });
    }
    if (method === 'POST' && resource === '/IncomingPhoneNumbers.json') {
      const offer = offers.find((o) => o.phoneNumber === form.PhoneNumber);
      if (!offer || [...incoming.values()].some((n) => n.phoneNumber === form.PhoneNumber))
        return twilioError(res, 400, 21422, 'PhoneNumber requested is not available');
      if (offer.addressRequirements !== 'none' && !addresses.some((a) => a.sid === form.AddressSid)) {
        return twilioError(res, 400, 21631, 'Phone Number Requires an Address but the AddressSid parameter was empty.');
      }
      const n: TwilioIncomingNumber = {
        sid: `PN${randomBytes(16).toString('hex')}`,
        phoneNumber: offer.phoneNumber,
        friendlyName: form.FriendlyName ?? offer.phoneNumber,
        addressSid: form.AddressSid ?? null,
        voiceUrl: '',
      };
      incoming.set(n.sid, n);
      return json(res, 201, incomingResource(n));
    }
    const one = /^\/IncomingPhoneNumbers\/(PN[0-9a-f]+)\.json$/.exec(resource);
    if (one) {
      const n = incoming.get(one[1]);
      if (!n) return twilioError(res, 404, 20404, `The requested resource ${resource} was not found`);
      if (method === 'POST') {
        if (form.VoiceUrl !== undefined) n.voiceUrl = form.VoiceUrl;
        return json(res, 200, incomingResource(n));
      }
      if (method === 'DELETE') {
        incoming.delete(n.sid);
        res.writeHead(204);
        return res.end();
      }
    }
    return twilioError(res, 404, 20404, 'The requested resource was not found');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    apiBase: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    from,
    requests,
    messages,
    calls,
    incoming,
    addresses,
    offers,
    failNext(count = 1) {
      failures += count;
    },
    failRequest(method, pattern, status, code, message) {
      planned.push({ method, pattern, status, code, message });
    },
    async postSigned(url, params) {
      const signature = twilio.getExpectedTwilioSignature(authToken, url, params);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        body: new URLSearchParams(params),
      });
      return { status: res.status, body: await res.text() };
    },
    async sendStatusCallback(sid, status, extra = {}) {
      const message = messages.find((m) => m.sid === sid);
      if (!message?.statusCallback) throw new Error(`no message ${sid} with a StatusCallback`);
      const params: Record<string, string> = {
        AccountSid: accountSid,
        ApiVersion: '2010-04-01',
        From: message.from,
        To: message.to,
        MessageSid: sid,
        SmsSid: sid,
        MessageStatus: status,
        SmsStatus: status,
        ...extra,
      };
      // Signed by the official library: the oracle our verifier must agree with.
      const signature = twilio.getExpectedTwilioSignature(authToken, message.statusCallback, params);
      const res = await fetch(message.statusCallback, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        body: new URLSearchParams(params),
      });
      await res.arrayBuffer();
      return res.status;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
