// Phone numbers, addresses and outbound messages at a telephony provider
// (Twilio, or the sandbox stand-in). Adapters throw AppError: `conflict` when a
// number is no longer available, `provider_refused` (400) when the provider
// refuses what the user sent, `provider_error` (502) when it fails or is
// unreachable.

export type NumberType = 'local' | 'mobile' | 'tollFree';
export const NUMBER_TYPES: readonly NumberType[] = ['local', 'mobile', 'tollFree'];

/** Spec 2.10. Twilio's `any` is shown as `local` (the stricter of the two; see docs/decisions/telephony.md). */
export type AddressRequirement = 'none' | 'local' | 'foreign';

export interface Capabilities {
  voice: boolean;
  sms: boolean;
  mms: boolean;
}

export interface AvailableNumber {
  phoneNumber: string;
  /** Display name from the provider, e.g. "(415) 555-0100". */
  friendlyName: string;
  country: string;
  type: NumberType;
  capabilities: Capabilities;
  addressRequirements: AddressRequirement;
  locality: string | null;
  region: string | null;
}

export interface NumberSearch {
  country: string;
  type: NumberType;
  /** Digits the number must contain. */
  contains?: string;
  limit: number;
}

export interface AddressInput {
  customerName: string;
  street: string;
  streetSecondary?: string;
  city: string;
  region: string;
  postalCode: string;
  isoCountry: string;
  friendlyName?: string;
}

export interface OutboundMessage {
  from: string;
  to: string;
  body: string;
  /** Where the provider reports delivery updates (signed with X-Twilio-Signature). */
  statusCallbackUrl: string;
}

/** An outbound call whose audio Twilio (or the sandbox carrier) streams to us as TwiML tells it. */
export interface PlaceCallRequest {
  from: string;
  to: string;
  /** What the call does once answered: `<Connect><Stream …>` to our media route. */
  twiml: string;
  /** initiated, ringing, answered and completed callbacks (signed with X-Twilio-Signature). */
  statusCallbackUrl: string;
  /** Asynchronous answering-machine detection reports here when set. */
  machineDetectionUrl?: string;
  /** How long it rings before it counts as not answered. */
  ringTimeoutSeconds?: number;
  /** The carrier hangs up after this many seconds (a backstop to our own limit). */
  timeLimitSeconds?: number;
  /** The sandbox carrier only (Twilio ignores it): what the simulated caller does once it answers. */
  script?: SandboxScript;
}

/**
 * What the sandbox carrier's simulated caller does: `default` speaks the
 * default script; `voicemail` is an answering machine (a greeting, a beep,
 * then Twilio's asynchronous AMD verdict `machine_end_beep`); a list is the
 * caller's own lines, in order.
 */
export type SandboxScript = 'default' | 'voicemail' | readonly string[];

/** A call the sandbox carrier makes to one of the service's numbers, as Twilio carries a call from a phone. */
export interface RingRequest {
  /** The caller's number (E.164). */
  from: string;
  /** The number called. */
  to: string;
  /** The number's voice webhook: PUBLIC_URL/api/webhooks/twilio/voice/{numberId}. */
  voiceUrl: string;
  script?: SandboxScript;
}

/** A dialled leg as the carrier is told it (a transfer): the number, its longest duration, where its final status goes. */
export interface DialLeg {
  phone: string;
  /** The leg's authorized maxDurationSeconds: the carrier hangs the leg up then. */
  timeLimitSeconds: number;
  /** The dialled leg's `completed` (with its CallDuration) is POSTed here, signed. */
  statusCallbackUrl: string;
  callerId?: string | null;
}

/** Live-call control: placing calls and changing a call under way (transfer, hang-up). */
export interface CallControl {
  placeCall(request: PlaceCallRequest): Promise<{ callSid: string }>;
  /** Replaces what the live call does with new TwiML. */
  redirectCall(callSid: string, twiml: string): Promise<void>;
  /** Ends the call; a call that already ended counts as ended. */
  hangUpCall(callSid: string): Promise<void>;
  /** Ends a call whose media stream we carry (the agent hung up): its markup hangs up, else the call is hung up. */
  endCall(callSid: string): Promise<void>;
  /**
   * Hands the live call to a person: `<Dial timeLimit>` so the leg ends when
   * its money does, with the leg's own status callback. Nothing follows: the
   * call ends with the leg.
   */
  transferCall(callSid: string, leg: DialLeg): Promise<void>;
  /** The sandbox carrier only: the simulated caller of a call under way (its script feeds the recogniser). */
  caller?(callSid: string): SimulatedCaller | null;
  /**
   * The sandbox carrier only: rings one of the service's numbers. Resolves
   * once the number's voice webhook has answered (`answered`: with TwiML;
   * false when it could not be reached or refused the request); the call
   * then goes on in the background as that TwiML says.
   */
  ring?(request: RingRequest): Promise<{ callSid: string; answered: boolean }>;
}

/** What the sandbox carrier's simulated caller says (DESIGN.md "Sandbox carrier"). */
export interface SimulatedCaller {
  /** Its script, in order: the recogniser's expected phrases. */
  readonly lines: readonly string[];
  /** The lines it has begun to speak, in order (its own words, when no recogniser is installed). */
  spoken(): readonly string[];
  /** The keys it heard the agent's side play (DTMF tones in the call's audio), in order. */
  heardDigits?(): string;
}

export interface TelephonyProvider {
  /** Provider slug of the search routes: `twilio` or `sandbox`. */
  readonly slug: 'twilio' | 'sandbox';
  readonly sandbox: boolean;
  /** The auth token that signs this provider's callbacks (X-Twilio-Signature). */
  readonly callbackSigningToken: string;

  /** Countries with the number types the provider offers there (ISO 3166 alpha-2). */
  listCountries(): Promise<Array<{ country: string; types: NumberType[] }>>;
  searchNumbers(search: NumberSearch): Promise<AvailableNumber[]>;
  /** Registers an address (regulated numbers need one); returns its sid. */
  createAddress(address: AddressInput): Promise<{ addressSid: string }>;
  /** Buys the number for the account; returns the provider's number sid. */
  buyNumber(request: { phoneNumber: string; addressSid?: string; friendlyName: string }): Promise<{ sid: string }>;
  /** Points the number's incoming calls at `url`, or clears it with null. */
  setVoiceUrl(sid: string, url: string | null): Promise<void>;
  /** Releases the number; a number the provider no longer has counts as released. */
  releaseNumber(sid: string): Promise<void>;
  sendMessage(message: OutboundMessage): Promise<{ sid: string; status: string }>;
  /** Places and controls live calls; null where this provider cannot carry calls yet. */
  readonly calls: CallControl | null;
  /** Stops background work (the sandbox's scheduled callbacks). */
  stop(): void;
}

/** The telephony providers of this server: the sandbox (unless production with Twilio) and Twilio when configured. */
export class TelephonyProviders {
  readonly sandbox: boolean;
  readonly name: string;
  constructor(readonly list: TelephonyProvider[]) {
    this.sandbox = list.some((p) => p.sandbox);
    this.name = list.map((p) => p.slug).join(' + ');
  }

  get(slug: string): TelephonyProvider | undefined {
    return this.list.find((p) => p.slug === slug);
  }

  stop(): void {
    for (const p of this.list) p.stop();
  }
}
