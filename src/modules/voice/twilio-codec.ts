// Twilio Media Streams, exactly (https://www.twilio.com/docs/voice/media-streams/websocket-messages):
// inbound `connected`, `start`, `media`, `mark`, `dtmf`, `stop`; outbound
// `media`, `mark`, `clear`. Parsing never throws anything but a
// TwilioMessageError, so a malformed message cannot crash a call.

export type TwilioInbound =
  | { event: 'connected'; protocol: string; version: string }
  | {
      event: 'start';
      sequenceNumber: number;
      streamSid: string;
      callSid: string;
      accountSid: string;
      tracks: string[];
      customParameters: Record<string, string>;
      mediaFormat: { encoding: string; sampleRate: number; channels: number };
    }
  | {
      event: 'media';
      sequenceNumber: number;
      streamSid: string;
      track: string;
      chunk: number;
      timestamp: number;
      payload: Uint8Array;
    }
  | { event: 'mark'; sequenceNumber: number; streamSid: string; name: string }
  | { event: 'dtmf'; sequenceNumber: number; streamSid: string; track: string; digit: string }
  | { event: 'stop'; sequenceNumber: number; streamSid: string; callSid: string; accountSid: string }
  /** A well-formed message of an event this codec does not know (one Twilio may add): ignored once the stream runs, refused before. */
  | { event: 'other'; name: string; streamSid: string | null };

export class TwilioMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TwilioMessageError';
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(obj: Json, key: string, where: string): string {
  const value = obj[key];
  if (typeof value !== 'string') throw new TwilioMessageError(`${where}.${key} must be a string`);
  return value;
}

function optStr(obj: Json, key: string, fallback: string): string {
  const value = obj[key];
  return typeof value === 'string' ? value : fallback;
}

/** Twilio sends counters as decimal strings ("chunk": "2"); numbers are accepted too. */
function int(obj: Json, key: string, where: string): number {
  const value = obj[key];
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw new TwilioMessageError(`${where}.${key} must be a non-negative integer`);
  return n;
}

function section(obj: Json, key: string): Json {
  const value = obj[key];
  if (!isObject(value)) throw new TwilioMessageError(`${key} must be an object`);
  return value;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Parses one text frame of a Twilio media stream. Throws TwilioMessageError on anything malformed. */
export function parseTwilioMessage(text: string): TwilioInbound {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new TwilioMessageError('not JSON');
  }
  if (!isObject(raw)) throw new TwilioMessageError('not a JSON object');
  const event = raw.event;
  switch (event) {
    case 'connected':
      return { event, protocol: optStr(raw, 'protocol', 'Call'), version: optStr(raw, 'version', '') };
    case 'start': {
      const start = section(raw, 'start');
      const params = start.customParameters ?? {};
      if (!isObject(params)) throw new TwilioMessageError('start.customParameters must be an object');
      const customParameters: Record<string, string> = {};
      for (const [k, v] of Object.entries(params)) {
        if (typeof v !== 'string') throw new TwilioMessageError(`start.customParameters.${k} must be a string`);
        customParameters[k] = v;
      }
      const format = isObject(start.mediaFormat) ? start.mediaFormat : {};
      const tracks = Array.isArray(start.tracks)
        ? start.tracks.filter((t): t is string => typeof t === 'string')
        : ['inbound'];
      const streamSid = typeof raw.streamSid === 'string' ? raw.streamSid : str(start, 'streamSid', 'start');
      return {
        event,
        sequenceNumber: int(raw, 'sequenceNumber', 'start'),
        streamSid,
        callSid: str(start, 'callSid', 'start'),
        accountSid: optStr(start, 'accountSid', ''),
        tracks,
        customParameters,
        mediaFormat: {
          encoding: typeof format.encoding === 'string' ? format.encoding : 'audio/x-mulaw',
          sampleRate: typeof format.sampleRate === 'number' ? format.sampleRate : 8000,
          channels: typeof format.channels === 'number' ? format.channels : 1,
        },
      };
    }
    case 'media': {
      const media = section(raw, 'media');
      const payload = str(media, 'payload', 'media');
      if (payload.length % 4 !== 0 || !BASE64.test(payload))
        throw new TwilioMessageError('media.payload must be base64');
      return {
        event,
        sequenceNumber: int(raw, 'sequenceNumber', 'media'),
        streamSid: str(raw, 'streamSid', 'media'),
        track: optStr(media, 'track', 'inbound'),
        chunk: int(media, 'chunk', 'media'),
        timestamp: int(media, 'timestamp', 'media'),
        payload: base64Bytes(payload),
      };
    }
    case 'mark':
      return {
        event,
        sequenceNumber: int(raw, 'sequenceNumber', 'mark'),
        streamSid: str(raw, 'streamSid', 'mark'),
        name: str(section(raw, 'mark'), 'name', 'mark'),
      };
    case 'dtmf': {
      const dtmf = section(raw, 'dtmf');
      const digit = str(dtmf, 'digit', 'dtmf');
      if (!/^[0-9*#A-D]$/.test(digit)) throw new TwilioMessageError('dtmf.digit must be one of 0-9 * # A-D');
      return {
        event,
        sequenceNumber: int(raw, 'sequenceNumber', 'dtmf'),
        streamSid: str(raw, 'streamSid', 'dtmf'),
        track: optStr(dtmf, 'track', 'inbound_track'),
        digit,
      };
    }
    case 'stop': {
      const stop = isObject(raw.stop) ? raw.stop : {};
      return {
        event,
        sequenceNumber: int(raw, 'sequenceNumber', 'stop'),
        streamSid: str(raw, 'streamSid', 'stop'),
        callSid: optStr(stop, 'callSid', ''),
        accountSid: optStr(stop, 'accountSid', ''),
      };
    }
    default:
      if (typeof event === 'string' && /^[a-z][A-Za-z_]{0,39}$/.test(event))
        return { event: 'other', name: event, streamSid: typeof raw.streamSid === 'string' ? raw.streamSid : null };
      throw new TwilioMessageError(
        typeof event === 'string' ? `unknown event ${JSON.stringify(event.slice(0, 40))}` : 'event missing',
      );
  }
}

/** Decoded base64 as a plain Uint8Array view of the decoded bytes (no second copy). */
function base64Bytes(payload: string): Uint8Array {
  const bytes = Buffer.from(payload, 'base64');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Outbound `media`: μ-law bytes for Twilio to play. */
export function formatMedia(streamSid: string, mulaw: Uint8Array): string {
  return mediaTemplate(streamSid)(mulaw);
}

/**
 * `formatMedia` for one stream, with the JSON around the payload built once: each agent frame (50 a second per
 * call) is then one base64 encoding spliced between a constant prefix and suffix, the exact text JSON.stringify
 * gives (base64 needs no escaping).
 */
export function mediaTemplate(streamSid: string): (mulaw: Uint8Array) => string {
  const prefix = `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"`;
  return (mulaw) => `${prefix}${Buffer.from(mulaw.buffer, mulaw.byteOffset, mulaw.byteLength).toString('base64')}"}}`;
}

/** Outbound `mark`: Twilio echoes it back once the audio sent before it has played. */
export function formatMark(streamSid: string, name: string): string {
  return JSON.stringify({ event: 'mark', streamSid, mark: { name } });
}

/** Outbound `clear`: Twilio drops the audio it holds and echoes the marks still pending. */
export function formatClear(streamSid: string): string {
  return JSON.stringify({ event: 'clear', streamSid });
}
