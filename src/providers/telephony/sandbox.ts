// Offline telephony that follows the real rules: a fixed inventory of
// well-formed numbers in several countries (fictional ranges where the country
// has them), some SMS-only, some needing a local or foreign address; bought
// numbers must come from that inventory; messages land in the sandbox outbox
// and their `sent` and `delivered` status callbacks are POSTed to the
// statusCallbackUrl, signed with X-Twilio-Signature like Twilio's, so they take
// the same route and checks as the real provider's.
import { randomBytes } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import { createOperatorHttp } from '../../lib/outbound-http.js';
import type { Outbox } from '../outbox.js';
import type {
  AddressInput,
  AddressRequirement,
  AvailableNumber,
  Capabilities,
  NumberSearch,
  NumberType,
  OutboundMessage,
  TelephonyProvider,
} from './interface.js';
import { OfflineCallerVoice } from '../call-speech/offline-caller.js';
import { type SandboxCallOptions, SandboxCallControl } from './sandbox-calls.js';
import { twilioSignature } from './twilio-signature.js';

interface Range {
  /** Numbers 0..count-1 of the range, E.164. */
  number: (i: number) => string;
  count: number;
  address: AddressRequirement;
  /** Every n-th number can send SMS but not take calls. */
  smsOnlyEvery?: number;
  voice?: boolean;
  localities: Array<[locality: string, region: string]>;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const US_AREAS = ['415', '212', '312', '512'];

/** The sandbox's inventory, per country and type. */
export const SANDBOX_INVENTORY: Record<string, Partial<Record<NumberType, Range>>> = {
  US: {
    // 555-0100 … 555-0199 are reserved for fiction in every area code.
    local: {
      number: (i) => `+1${US_AREAS[i % 4]}5550${pad(100 + Math.floor(i / 4), 3)}`,
      count: 400,
      address: 'none',
      smsOnlyEvery: 5,
      localities: [
        ['San Francisco', 'CA'],
        ['New York', 'NY'],
        ['Chicago', 'IL'],
        ['Austin', 'TX'],
      ],
    },
    tollFree: { number: (i) => `+18335550${pad(100 + i, 3)}`, count: 100, address: 'none', localities: [['', '']] },
  },
  CA: {
    local: {
      number: (i) => `+1${i % 2 ? '416' : '604'}5550${pad(100 + Math.floor(i / 2), 3)}`,
      count: 200,
      address: 'none',
      localities: [
        ['Vancouver', 'BC'],
        ['Toronto', 'ON'],
      ],
    },
    tollFree: { number: (i) => `+18445550${pad(100 + i, 3)}`, count: 100, address: 'none', localities: [['', '']] },
  },
  GB: {
    // Ofcom's drama ranges.
    local: { number: (i) => `+4420794600${pad(i, 2)}`, count: 100, address: 'local', localities: [['London', '']] },
    mobile: {
      number: (i) => `+4477009001${pad(i, 2)}`,
      count: 100,
      address: 'none',
      smsOnlyEvery: 3,
      localities: [['', '']],
    },
    tollFree: { number: (i) => `+4480815700${pad(i, 2)}`, count: 100, address: 'none', localities: [['', '']] },
  },
  DE: {
    local: { number: (i) => `+493023125${pad(i, 3)}`, count: 200, address: 'local', localities: [['Berlin', 'BE']] },
    mobile: {
      number: (i) => `+4915770${pad(i, 5)}`,
      count: 200,
      address: 'foreign',
      smsOnlyEvery: 2,
      localities: [['', '']],
    },
  },
  AU: {
    // ACMA's fictional ranges.
    local: { number: (i) => `+6125550${pad(i, 4)}`, count: 200, address: 'local', localities: [['Sydney', 'NSW']] },
    mobile: { number: (i) => `+61491570${pad(i, 3)}`, count: 200, address: 'none', localities: [['', '']] },
  },
  FR: {
    // ARCEP's fictional ranges.
    local: { number: (i) => `+3319900${pad(i, 4)}`, count: 200, address: 'local', localities: [['Paris', 'IDF']] },
    mobile: {
      number: (i) => `+3363998${pad(i, 4)}`,
      count: 200,
      address: 'foreign',
      voice: false,
      localities: [['', '']],
    },
  },
};

function friendlyName(e164: string): string {
  if (e164.startsWith('+1') && e164.length === 12) return `(${e164.slice(2, 5)}) ${e164.slice(5, 8)}-${e164.slice(8)}`;
  return e164;
}

export interface SandboxTelephonyOptions {
  /** Pause before each status callback (and between retries, doubled each time). */
  callbackDelayMs: number;
  /** The sandbox carrier's script and timing (tests). */
  calls?: Partial<Pick<SandboxCallOptions, 'script' | 'replyPauseMs' | 'replyTimeoutMs' | 'voice' | 'transferLegMs'>>;
}

export class SandboxTelephonyProvider implements TelephonyProvider {
  readonly slug = 'sandbox';
  readonly sandbox = true;
  /** The sandbox carrier: a simulated caller answers each call on the media stream of its TwiML (sandbox-calls.ts). */
  readonly calls: SandboxCallControl;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Status callbacks go to PUBLIC_URL (the operator's, often this machine). */
  private readonly http = createOperatorHttp({ timeoutMs: 10_000, maxBytes: 64 * 1024 });
  private stopped = false;

  constructor(
    private readonly outbox: Outbox,
    /** Signs the sandbox's callbacks; derived from the master key (see docs/decisions/telephony.md). */
    readonly callbackSigningToken: string,
    private readonly options: SandboxTelephonyOptions = { callbackDelayMs: 500 },
  ) {
    let voice: OfflineCallerVoice | null | undefined;
    this.calls = new SandboxCallControl({
      callbackDelayMs: options.callbackDelayMs,
      post: (url, params) => this.deliver(url, params),
      request: (url, params) => this.send(url, params),
      // Found on the first call (flite first, then espeak-ng), not at start.
      voice: () => (voice === undefined ? (voice = OfflineCallerVoice.create()) : voice),
      ...options.calls,
    });
  }

  async listCountries(): Promise<Array<{ country: string; types: NumberType[] }>> {
    return Object.entries(SANDBOX_INVENTORY).map(([country, ranges]) => ({
      country,
      types: Object.keys(ranges) as NumberType[],
    }));
  }

  async searchNumbers(search: NumberSearch): Promise<AvailableNumber[]> {
    const range = SANDBOX_INVENTORY[search.country]?.[search.type];
    if (!range) return [];
    const out: AvailableNumber[] = [];
    for (let i = 0; i < range.count && out.length < search.limit; i++) {
      const entry = this.entry(search.country, search.type, range, i);
      if (search.contains && !entry.phoneNumber.slice(1).includes(search.contains)) continue;
      out.push(entry);
    }
    return out;
  }

  async createAddress(address: AddressInput): Promise<{ addressSid: string }> {
    // Twilio validates addresses; the sandbox refuses a postal code without any digit or letter.
    if (!/[0-9A-Za-z]/.test(address.postalCode))
      throw new AppError('provider_refused', 'the sandbox provider refused the address: postal code is not valid');
    return { addressSid: `AD${randomBytes(16).toString('hex')}` };
  }

  async buyNumber(request: { phoneNumber: string }): Promise<{ sid: string }> {
    if (!this.find(request.phoneNumber))
      throw new AppError('conflict', `the number ${request.phoneNumber} is not available; search again`);
    return { sid: `PN${randomBytes(16).toString('hex')}` };
  }

  async setVoiceUrl(): Promise<void> {}

  async releaseNumber(): Promise<void> {}

  async sendMessage(message: OutboundMessage): Promise<{ sid: string; status: string }> {
    const sid = `SM${randomBytes(16).toString('hex')}`;
    await this.outbox.add({
      channel: 'sms',
      to: message.to,
      body: message.body,
      data: { from: message.from, messageSid: sid },
    });
    void this.deliverStatuses(message, sid);
    return { sid, status: 'queued' };
  }

  stop(): void {
    this.stopped = true;
    this.calls.stop();
    void this.http.close().catch(() => {});
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** The inventory entry of a number, or undefined when the sandbox does not offer it. */
  find(phoneNumber: string): AvailableNumber | undefined {
    for (const [country, ranges] of Object.entries(SANDBOX_INVENTORY)) {
      for (const [type, range] of Object.entries(ranges) as Array<[NumberType, Range]>) {
        for (let i = 0; i < range.count; i++)
          if (range.number(i) === phoneNumber) return this.entry(country, type, range, i);
      }
    }
    return undefined;
  }

  private entry(country: string, type: NumberType, range: Range, i: number): AvailableNumber {
    const phoneNumber = range.number(i);
    const smsOnly =
      range.voice === false || (range.smsOnlyEvery !== undefined && i % range.smsOnlyEvery === range.smsOnlyEvery - 1);
    const capabilities: Capabilities = { voice: !smsOnly, sms: true, mms: country === 'US' || country === 'CA' };
    const [locality, region] = range.localities[i % range.localities.length];
    return {
      phoneNumber,
      friendlyName: friendlyName(phoneNumber),
      country,
      type,
      capabilities,
      addressRequirements: range.address,
      locality: locality || null,
      region: region || null,
    };
  }

  /** `sent`, then `delivered`, each POSTed (retried up to 3 times) before the next. */
  private async deliverStatuses(message: OutboundMessage, sid: string): Promise<void> {
    for (const status of ['sent', 'delivered']) {
      const params: Record<string, string> = {
        AccountSid: 'ACsandbox',
        ApiVersion: '2010-04-01',
        From: message.from,
        To: message.to,
        MessageSid: sid,
        SmsSid: sid,
        MessageStatus: status,
        SmsStatus: status,
      };
      await this.pause(this.options.callbackDelayMs);
      if (!(await this.deliver(message.statusCallbackUrl, params))) return;
    }
  }

  /** POSTs one signed callback, retried up to 3 times (pauses doubling from callbackDelayMs); false when it never got through. */
  private async deliver(url: string, params: Record<string, string>): Promise<boolean> {
    for (let attempt = 0; attempt < 4 && !this.stopped; attempt++) {
      if (attempt > 0) await this.pause(this.options.callbackDelayMs * 2 ** attempt);
      if (this.stopped) return false;
      if (await this.post(url, params)) return true;
    }
    return false;
  }

  private async post(url: string, params: Record<string, string>): Promise<boolean> {
    const answer = await this.send(url, params);
    return answer !== null && answer.status >= 200 && answer.status < 300;
  }

  /** One signed POST, as Twilio signs its webhooks → the answer's status and body; null when it was not reached. */
  private async send(url: string, params: Record<string, string>): Promise<{ status: number; body: string } | null> {
    if (this.stopped) return null;
    try {
      const res = await this.http(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': twilioSignature(this.callbackSigningToken, url, params),
          'user-agent': 'TwilioProxy/1.1 (workspace sandbox)',
        },
        body: new URLSearchParams(params),
      });
      const body = await res.text().catch(() => '');
      return { status: res.status, body };
    } catch {
      return null;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      this.timers.add(timer);
    });
  }
}
