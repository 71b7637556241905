// The TwiML the service answers Twilio with (DESIGN.md "Voice agent"): a
// media stream to our WebSocket, a spoken refusal, a transfer. Every value is
// XML-escaped; nothing a caller or user typed reaches the markup unescaped.

const escapeXml = (text: string): string =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

const response = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

/** Connects the call's audio both ways to `streamUrl` (wss://…/api/media/twilio), with custom parameters Twilio repeats in the stream's `start` message. */
export function connectStreamTwiml(streamUrl: string, parameters: Record<string, string>): string {
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join('');
  return response(`<Connect><Stream url="${escapeXml(streamUrl)}">${params}</Stream></Connect>`);
}

/** Says one sentence and hangs up: how a refused inbound call is answered. */
export function sayAndHangUpTwiml(sentence: string): string {
  return response(`<Say>${escapeXml(sentence)}</Say><Hangup/>`);
}

/** A dialled leg as the carrier is told it (transfers.ts): the number, its longest duration, where its final status goes. */
export interface DialTwimlLeg {
  phone: string;
  /** The leg's authorized maxDurationSeconds: the carrier hangs the leg up then. */
  timeLimitSeconds: number;
  /** The dialled leg's `completed` (with its CallDuration) is POSTed here, signed. */
  statusCallbackUrl: string;
  callerId?: string | null;
}

/**
 * Hands the live call to a person: `<Dial timeLimit>` so the leg ends when
 * its money does, and `<Number statusCallback>` so the carrier reports the
 * dialled leg's own duration when it ends (Twilio: CallStatus, CallDuration,
 * ParentCallSid). Nothing follows the `<Dial>`: the call ends with the leg.
 */
export function dialTwiml(leg: DialTwimlLeg): string {
  const callerId = leg.callerId ? ` callerId="${escapeXml(leg.callerId)}"` : '';
  const timeLimit = Math.max(1, Math.floor(leg.timeLimitSeconds));
  return response(
    `<Dial timeLimit="${timeLimit}"${callerId}><Number statusCallbackEvent="completed" statusCallback="${escapeXml(leg.statusCallbackUrl)}" statusCallbackMethod="POST">${escapeXml(leg.phone)}</Number></Dial>`,
  );
}

export function hangUpTwiml(): string {
  return response('<Hangup/>');
}

/** The WebSocket origin of PUBLIC_URL: http → ws, https → wss. */
export function mediaStreamUrl(publicUrl: string, path: string): string {
  const url = new URL(path, publicUrl);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.toString();
}
