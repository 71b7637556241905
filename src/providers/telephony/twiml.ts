// TwiML, the markup Twilio (and the sandbox carrier, which carries calls as
// Twilio does) is told what a call does with (DESIGN.md "Voice agent"): a
// media stream to our WebSocket, a spoken refusal, a hang-up, a transfer's
// `<Dial>`. Every value is XML-escaped; nothing a caller or user typed reaches
// the markup unescaped.
import type { DialLeg } from './interface.js';

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

/**
 * Hands the live call to a person: `<Dial timeLimit>` so the leg ends when
 * its money does, and `<Number statusCallback>` so the carrier reports the
 * dialled leg's own duration when it ends (Twilio: CallStatus, CallDuration,
 * ParentCallSid). Nothing follows the `<Dial>`: the call ends with the leg.
 */
export function dialTwiml(leg: DialLeg): string {
  const callerId = leg.callerId ? ` callerId="${escapeXml(leg.callerId)}"` : '';
  const timeLimit = Math.max(1, Math.floor(leg.timeLimitSeconds));
  return response(
    `<Dial timeLimit="${timeLimit}"${callerId}><Number statusCallbackEvent="completed" statusCallback="${escapeXml(leg.statusCallbackUrl)}" statusCallbackMethod="POST">${escapeXml(leg.phone)}</Number></Dial>`,
  );
}

/** Ends the call (a live call redirected here hangs up at once). */
export function hangUpTwiml(): string {
  return response('<Hangup/>');
}
