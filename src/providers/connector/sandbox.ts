// The sandbox connector: plausible sample records for the target store,
// streamed in pieces like a real answer, without leaving the machine.
// `params.limit` records (default 10, at most 1,000); `/get-leads` streams
// exactly `params.credits` leads (the credits the service granted).
import { randomInt, randomUUID } from 'node:crypto';
import { type ConnectorProvider, type ConnectorRequest, ConnectorError } from './interface.js';

export const SANDBOX_DEFAULT_LIMIT = 10;
export const SANDBOX_MAX_LIMIT = 1000;
/** Frames per streamed piece. */
const PIECE = 50;

const FIRST = [
  'Ada',
  'Grace',
  'Alan',
  'Katherine',
  'Linus',
  'Margaret',
  'Dennis',
  'Barbara',
  'Ken',
  'Radia',
  'Tim',
  'Frances',
  'Edsger',
  'Hedy',
  'John',
  'Joan',
];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Torvalds',
  'Hamilton',
  'Ritchie',
  'Liskov',
  'Thompson',
  'Perlman',
  'Berners-Lee',
  'Allen',
  'Dijkstra',
  'Lamarr',
  'McCarthy',
  'Clarke',
];
const COMPANIES = [
  'Acme Corp',
  'Globex',
  'Initech',
  'Umbrella Health',
  'Stark Industries',
  'Wayne Logistics',
  'Hooli',
  'Vandelay Imports',
  'Soylent Foods',
  'Tyrell Systems',
];
const TITLES = [
  'Head of Sales',
  'Operations Manager',
  'CTO',
  'Office Manager',
  'Founder',
  'Procurement Lead',
  'Marketing Director',
];

const pick = <T>(list: readonly T[]): T => list[randomInt(list.length)];
/** A US number in the 555-01xx fictional range, E.164. */
const phone = () => `+1${pick(['212', '415', '312', '617', '206'])}55501${String(randomInt(100)).padStart(2, '0')}`;
const daysFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

function contact() {
  const firstName = pick(FIRST);
  const lastName = pick(LAST);
  const company = pick(COMPANIES);
  const domain = `${company.toLowerCase().replace(/[^a-z]+/g, '')}.example`;
  return {
    id: randomUUID(),
    firstName,
    lastName,
    phone: phone(),
    email: `${firstName}.${lastName}@${domain}`.toLowerCase(),
    company,
    title: pick(TITLES),
  };
}

const RECORDS: Record<string, () => Record<string, unknown>> = {
  contacts: contact,
  calls: () => ({
    id: randomUUID(),
    from: phone(),
    to: phone(),
    direction: pick(['inbound', 'outbound']),
    durationSeconds: randomInt(5, 900),
    outcome: pick(['completed', 'voicemail', 'no-answer', 'busy']),
    startedAt: daysFromNow(-randomInt(30)),
  }),
  agents: () => ({
    id: randomUUID(),
    name: `${pick(FIRST)} (${pick(['sales', 'support', 'scheduling'])} agent)`,
    language: pick(['en-US', 'en-GB', 'es-ES', 'de-DE']),
    voice: pick(['alloy', 'verse', 'sage']),
    prompt: 'Greet the caller, qualify the need, book a follow-up.',
  }),
  tasks: () => ({
    id: randomUUID(),
    title: `${pick(['Call back', 'Send quote to', 'Follow up with', 'Book demo for'])} ${pick(FIRST)} ${pick(LAST)}`,
    status: pick(['open', 'in_progress', 'done']),
    priority: pick(['low', 'normal', 'high']),
    dueAt: daysFromNow(randomInt(1, 21)),
  }),
  'conversational-pathways': () => ({
    id: randomUUID(),
    name: `${pick(['Inbound', 'Renewal', 'Appointment'])} pathway`,
    nodes: [
      { id: 'start', type: 'greeting' },
      { id: 'qualify', type: 'question' },
      { id: 'end', type: 'goodbye' },
    ],
    edges: [
      { from: 'start', to: 'qualify' },
      { from: 'qualify', to: 'end' },
    ],
  }),
  campaigns: () => ({
    id: randomUUID(),
    name: `${pick(['Spring', 'Summer', 'Autumn', 'Winter'])} ${pick(['outreach', 'renewals', 'launch'])}`,
    channel: pick(['phone', 'sms', 'email']),
    status: pick(['draft', 'running', 'paused', 'finished']),
    startsAt: daysFromNow(randomInt(-10, 10)),
    budget: { amount: randomInt(100, 5000), currency: 'usd' },
  }),
  'sms-messages': () => ({
    id: randomUUID(),
    from: phone(),
    to: phone(),
    direction: pick(['inbound', 'outbound']),
    body: pick(['Thanks, see you Tuesday!', 'Can you call me back?', 'Your appointment is confirmed.']),
    sentAt: daysFromNow(-randomInt(14)),
  }),
  'performance-metrics': () => ({
    id: randomUUID(),
    metric: pick(['calls_answered', 'avg_handle_seconds', 'conversion_rate', 'sms_sent']),
    value: randomInt(0, 1000),
    period: { start: daysFromNow(-7), end: daysFromNow(0) },
  }),
};

const lead = () => ({ ...contact(), source: 'sandbox', score: randomInt(1, 100), status: 'new' });

/** How many records a request asks for: `/get-leads` its credits, anything else its limit. */
export function sandboxCount(path: string, params: Record<string, unknown>): number {
  if (path === '/get-leads') return wholeNumber(params.credits) ?? 0;
  const limit = wholeNumber(params.limit) ?? SANDBOX_DEFAULT_LIMIT;
  return Math.min(Math.max(limit, 0), SANDBOX_MAX_LIMIT);
}

const wholeNumber = (value: unknown) =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;

export class SandboxConnectorProvider implements ConnectorProvider {
  readonly name = 'sandbox';
  readonly sandbox = true;

  async *stream(request: ConnectorRequest): AsyncIterable<string[]> {
    const make = request.path === '/get-leads' ? lead : RECORDS[request.repository];
    if (!make) throw new ConnectorError(`sandbox connector: no sample records for "${request.repository}"`, false);
    let left = sandboxCount(request.path, request.params);
    while (left > 0) {
      // A turn of the event loop between pieces, as a network stream has.
      await new Promise((resolve) => setImmediate(resolve));
      if (request.signal.aborted) return;
      const n = Math.min(PIECE, left);
      yield Array.from({ length: n }, () => JSON.stringify(make()));
      left -= n;
    }
  }
}
