// Twilio over REST (TWILIO_API_BASE): AvailablePhoneNumbers (countries and
// search), Addresses, IncomingPhoneNumbers (buy, update the voice webhook,
// release) and Messages. Credentials are config.twilio, shared with the SMS
// code provider through TwilioRestClient.
import { AppError } from '../../http/errors.js';
import { TwilioApiError, type TwilioCredentials, type TwilioParams, TwilioRestClient } from '../twilio-rest.js';
import { dialTwiml, hangUpTwiml } from './twiml.js';
import type {
  DialLeg,
  AddressInput,
  AddressRequirement,
  AvailableNumber,
  CallControl,
  Capabilities,
  NumberSearch,
  NumberType,
  OutboundMessage,
  PlaceCallRequest,
  TelephonyProvider,
} from './interface.js';

const RESOURCE: Record<NumberType, string> = { local: 'Local', mobile: 'Mobile', tollFree: 'TollFree' };
const SUBRESOURCE: Record<string, NumberType> = { local: 'local', mobile: 'mobile', toll_free: 'tollFree' };

/** Twilio error codes that mean "this number cannot be had any more". */
const NUMBER_UNAVAILABLE = new Set([21421, 21422, 21452]);

interface TwilioAvailableNumber {
  friendly_name?: string;
  phone_number: string;
  locality?: string | null;
  region?: string | null;
  iso_country?: string;
  address_requirements?: string;
  capabilities?: Record<string, boolean>;
}

function capabilitiesOf(raw: Record<string, boolean> | undefined): Capabilities {
  // AvailablePhoneNumbers spells them voice/SMS/MMS, IncomingPhoneNumbers voice/sms/mms.
  const get = (name: string) => raw?.[name] === true || raw?.[name.toUpperCase()] === true;
  return { voice: get('voice'), sms: get('sms'), mms: get('mms') };
}

function addressRequirementOf(raw: string | undefined): AddressRequirement {
  if (raw === 'foreign') return 'foreign';
  if (raw === 'local' || raw === 'any') return 'local';
  return 'none';
}

export class TwilioTelephonyProvider implements TelephonyProvider, CallControl {
  readonly slug = 'twilio';
  readonly calls: CallControl = this;
  readonly sandbox = false;
  readonly callbackSigningToken: string;
  private readonly client: TwilioRestClient;

  constructor(credentials: TwilioCredentials) {
    this.client = new TwilioRestClient(credentials);
    this.callbackSigningToken = credentials.authToken;
  }

  async listCountries(): Promise<Array<{ country: string; types: NumberType[] }>> {
    const body = await this.call<{
      available_phone_numbers?: Array<{ country_code: string; subresource_uris?: Record<string, string> }>;
    }>('GET', '/AvailablePhoneNumbers.json');
    return (body.available_phone_numbers ?? []).map((c) => ({
      country: c.country_code,
      types: Object.keys(c.subresource_uris ?? {})
        .map((k) => SUBRESOURCE[k])
        .filter((t): t is NumberType => t !== undefined),
    }));
  }

  async searchNumbers(search: NumberSearch): Promise<AvailableNumber[]> {
    let body: { available_phone_numbers?: TwilioAvailableNumber[] };
    try {
      body = await this.client.request(
        'GET',
        `/AvailablePhoneNumbers/${encodeURIComponent(search.country)}/${RESOURCE[search.type]}.json`,
        {
          PageSize: String(search.limit),
          Contains: search.contains,
        },
      );
    } catch (err) {
      // Twilio answers 404 for a country or type it does not offer: nothing available.
      if (err instanceof TwilioApiError && err.status === 404) return [];
      throw this.mapError(err);
    }
    return (body.available_phone_numbers ?? []).map((n) => ({
      phoneNumber: n.phone_number,
      friendlyName: n.friendly_name ?? n.phone_number,
      country: n.iso_country ?? search.country,
      type: search.type,
      capabilities: capabilitiesOf(n.capabilities),
      addressRequirements: addressRequirementOf(n.address_requirements),
      locality: n.locality ?? null,
      region: n.region ?? null,
    }));
  }

  async createAddress(address: AddressInput): Promise<{ addressSid: string }> {
    const body = await this.call<{ sid?: string }>('POST', '/Addresses.json', {
      CustomerName: address.customerName,
      Street: address.street,
      StreetSecondary: address.streetSecondary,
      City: address.city,
      Region: address.region,
      PostalCode: address.postalCode,
      IsoCountry: address.isoCountry,
      FriendlyName: address.friendlyName,
    });
    if (!body.sid) throw new AppError('provider_error', 'Twilio answered an address without a sid');
    return { addressSid: body.sid };
  }

  async buyNumber(request: {
    phoneNumber: string;
    addressSid?: string;
    friendlyName: string;
  }): Promise<{ sid: string }> {
    const body = await this.call<{ sid?: string }>('POST', '/IncomingPhoneNumbers.json', {
      PhoneNumber: request.phoneNumber,
      AddressSid: request.addressSid,
      FriendlyName: request.friendlyName,
    });
    if (!body.sid) throw new AppError('provider_error', 'Twilio answered a purchase without a number sid');
    return { sid: body.sid };
  }

  async setVoiceUrl(sid: string, url: string | null): Promise<void> {
    await this.call('POST', `/IncomingPhoneNumbers/${encodeURIComponent(sid)}.json`, {
      VoiceUrl: url ?? '',
      VoiceMethod: 'POST',
    });
  }

  async releaseNumber(sid: string): Promise<void> {
    try {
      await this.client.request('DELETE', `/IncomingPhoneNumbers/${encodeURIComponent(sid)}.json`);
    } catch (err) {
      if (err instanceof TwilioApiError && err.status === 404) return; // already released
      throw this.mapError(err);
    }
  }

  async sendMessage(message: OutboundMessage): Promise<{ sid: string; status: string }> {
    try {
      return await this.client.sendMessage(message);
    } catch (err) {
      throw this.mapError(err);
    }
  }

  /**
   * POST /Calls.json with inline TwiML, the four progress callbacks, and, when
   * asked, asynchronous answering-machine detection that waits for the beep.
   */
  async placeCall(request: PlaceCallRequest): Promise<{ callSid: string }> {
    const amd = request.machineDetectionUrl
      ? {
          MachineDetection: 'DetectMessageEnd',
          AsyncAmd: 'true',
          AsyncAmdStatusCallback: request.machineDetectionUrl,
          AsyncAmdStatusCallbackMethod: 'POST',
        }
      : {};
    const body = await this.call<{ sid?: string }>('POST', '/Calls.json', {
      To: request.to,
      From: request.from,
      Twiml: request.twiml,
      StatusCallback: request.statusCallbackUrl,
      StatusCallbackMethod: 'POST',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      Timeout: request.ringTimeoutSeconds === undefined ? undefined : String(request.ringTimeoutSeconds),
      TimeLimit: request.timeLimitSeconds === undefined ? undefined : String(request.timeLimitSeconds),
      ...amd,
    });
    if (!body.sid) throw new AppError('provider_error', 'Twilio answered a call without a sid');
    return { callSid: body.sid };
  }

  async redirectCall(callSid: string, twiml: string): Promise<void> {
    await this.call('POST', `/Calls/${encodeURIComponent(callSid)}.json`, { Twiml: twiml });
  }

  async endCall(callSid: string): Promise<void> {
    await this.redirectCall(callSid, hangUpTwiml()).catch(() => this.hangUpCall(callSid));
  }

  async transferCall(callSid: string, leg: DialLeg): Promise<void> {
    await this.redirectCall(callSid, dialTwiml(leg));
  }

  async hangUpCall(callSid: string): Promise<void> {
    try {
      await this.client.request('POST', `/Calls/${encodeURIComponent(callSid)}.json`, { Status: 'completed' });
    } catch (err) {
      // 404, or 21220 "call is not in-progress": it has ended already.
      if (err instanceof TwilioApiError && (err.status === 404 || err.code === 21220)) return;
      throw this.mapError(err);
    }
  }

  stop(): void {}

  private async call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, params?: TwilioParams): Promise<T> {
    try {
      return await this.client.request<T>(method, path, params);
    } catch (err) {
      throw this.mapError(err);
    }
  }

  private mapError(err: unknown): unknown {
    if (!(err instanceof TwilioApiError)) return err;
    const detail = `${err.message}${err.code ? ` (Twilio error ${err.code})` : ''}`;
    if (err.code !== null && NUMBER_UNAVAILABLE.has(err.code))
      return new AppError('conflict', `the number is no longer available: ${detail}; search again`);
    // A 400 is about what the user sent (an invalid address, a bad "to"); 401/403/5xx and no answer are the provider's failure.
    if (err.status === 400) return new AppError('provider_refused', `Twilio refused the request: ${detail}`);
    return new AppError('provider_error', `Twilio failed: ${detail}`);
  }
}
