// Integrations (spec 4.17, 2.16): a user's scheduling account, validated with
// the provider, stored as a sanitized payload with the token sealed by the
// master key, and offered to call sessions as functions.
import type { TSchema } from 'typebox';
import { invalidInput, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { iso } from '../../lib/time.js';
import type { SchedulingProvider } from '../../providers/scheduling/interface.js';
import {
  BookMeetingArgs,
  CheckAvailabilityArgs,
  type IntegrationFunction,
  SCHEDULING_FUNCTIONS,
  type SchedulingFunctionName,
} from './functions.js';
import type { IntegrationStore } from './store.js';
import type { IntegrationsTable } from './tables.js';

export const INTEGRATION_TYPES = ['calendly'] as const;
/** Names a token may arrive under, first wins (spec 2.16). */
export const TOKEN_ALIASES = ['accessToken', 'apiKey', 'token', 'pat'] as const;
/** Names an event type may arrive under, first wins (spec 2.16). */
export const TEMPLATE_ALIASES = ['eventTypeUrl', 'eventType', 'eventTypeSlug'] as const;
const MAX_SLOTS = 20;

export interface IntegrationInput {
  type: string;
  data: Record<string, unknown>;
}

/** The sanitized payload stored for a Calendly integration (spec 2.16). */
export interface SchedulingData {
  eventTypeUri: string;
  eventTypeSlug: string;
  eventTypeName: string;
  userUri: string;
  schedulingUrl?: string;
}

export interface IntegrationView {
  id: string;
  type: string;
  /** The sanitized payload with `accessToken` masked (abcd…wxyz). */
  data: SchedulingData & { accessToken: string };
  createdAt: string;
}

/** First and last four characters around an ellipsis; shorter tokens show nothing of themselves. */
export function maskToken(token: string): string {
  return token.length >= 12 ? `${token.slice(0, 4)}…${token.slice(-4)}` : '…';
}

export class IntegrationService {
  constructor(
    private readonly store: IntegrationStore,
    private readonly scheduling: SchedulingProvider,
    private readonly secretBox: SecretBox,
    private readonly clock: Clock,
  ) {}

  async list(userId: string): Promise<IntegrationView[]> {
    return (await this.store.listByUser(userId)).map((row) => this.view(row));
  }

  /** Validates the token and event type with the provider, then stores the sanitized payload. */
  async create(userId: string, input: IntegrationInput): Promise<IntegrationView> {
    const type = input.type.trim().toLowerCase();
    if (!(INTEGRATION_TYPES as readonly string[]).includes(type))
      throw invalidInput(`unknown integration type "${input.type}" (supported: ${INTEGRATION_TYPES.join(', ')})`);
    for (const [key, value] of Object.entries(input.data))
      if (typeof value !== 'string') throw invalidInput(`data.${key} must be a string`);
    const data = input.data as Record<string, string>;
    const token = firstOf(data, TOKEN_ALIASES);
    if (!token) throw invalidInput(`data needs the access token under one of ${TOKEN_ALIASES.join(', ')}`);
    const template = firstOf(data, TEMPLATE_ALIASES);
    if (!template) throw invalidInput(`data needs the event type under one of ${TEMPLATE_ALIASES.join(', ')}`);

    const user = await this.scheduling.currentUser(token);
    const eventType = await this.scheduling.findEventType(token, user, template);
    if (!eventType) {
      const known = (await this.scheduling.listEventTypes(token, user.uri)).map((t) => t.slug).join(', ') || 'none';
      throw invalidInput(`event type "${template}" is not one of this account's event types (${known})`);
    }

    const sanitized: SchedulingData = {
      eventTypeUri: eventType.uri,
      eventTypeSlug: eventType.slug,
      eventTypeName: eventType.name,
      userUri: user.uri,
      ...(eventType.schedulingUrl || user.schedulingUrl
        ? { schedulingUrl: eventType.schedulingUrl || user.schedulingUrl! }
        : {}),
    };
    const row: IntegrationsTable = {
      id: newId(),
      user_id: userId,
      type,
      data: JSON.stringify(sanitized),
      sealed_token: this.secretBox.seal(token),
      created_at: this.clock.now(),
    };
    await this.store.insert(row);
    return this.view(row);
  }

  async delete(userId: string, id: string): Promise<void> {
    if (!(await this.store.delete(userId, id))) throw notFound('integration');
  }

  /**
   * The functions the user's integrations `ids` give an agent in a call
   * (404 for an id that is not theirs). Names are unique across the list.
   */
  async functionsFor(userId: string, ids: readonly string[]): Promise<IntegrationFunction[]> {
    const seen = new Map<string, number>();
    const out: IntegrationFunction[] = [];
    for (const id of ids) {
      const row = await this.store.findById(userId, id);
      if (!row) throw notFound('integration');
      for (const [name, spec] of Object.entries(SCHEDULING_FUNCTIONS) as Array<
        [SchedulingFunctionName, (typeof SCHEDULING_FUNCTIONS)[SchedulingFunctionName]]
      >) {
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        out.push({
          name: n === 1 ? name : `${name}_${n}`,
          function: name,
          integrationId: row.id,
          type: row.type,
          description: `${spec.description} Event type: ${(JSON.parse(row.data) as SchedulingData).eventTypeName}.`,
          parameters: JSON.parse(JSON.stringify(spec.parameters)) as Record<string, unknown>,
        });
      }
    }
    return out;
  }

  /** Runs one integration function for a call; 404 for an integration that is not the user's, 400 for bad arguments. */
  async invoke(userId: string, integrationId: string, fn: string, args: unknown): Promise<Record<string, unknown>> {
    const row = await this.store.findById(userId, integrationId);
    if (!row) throw notFound('integration');
    const data = JSON.parse(row.data) as SchedulingData;
    const token = this.secretBox.openText(row.sealed_token);
    if (fn === 'check_availability')
      return this.checkAvailability(token, data, await checked(CheckAvailabilityArgs, args ?? {}, fn));
    if (fn === 'book_meeting') return this.bookMeeting(token, data, await checked(BookMeetingArgs, args, fn));
    throw invalidInput(`unknown function "${fn}" (${Object.keys(SCHEDULING_FUNCTIONS).join(', ')})`);
  }

  private async checkAvailability(
    token: string,
    data: SchedulingData,
    args: CheckAvailabilityArgs,
  ): Promise<Record<string, unknown>> {
    const now = this.clock.now();
    // Calendly takes only future ranges: start a minute from now at the earliest.
    const from = Math.max(args.start_date ? Date.parse(`${args.start_date}T00:00:00Z`) : now, now + 60_000);
    const to = from + (args.days ?? 3) * 86_400_000;
    const slots = await this.scheduling.availableTimes(token, data.eventTypeUri, new Date(from), new Date(to));
    return {
      event_type: data.eventTypeName,
      timezone: 'UTC',
      slots: slots.slice(0, MAX_SLOTS).map((s) => ({ start_time: s.startTime })),
      more: slots.length > MAX_SLOTS,
    };
  }

  private async bookMeeting(
    token: string,
    data: SchedulingData,
    args: BookMeetingArgs,
  ): Promise<Record<string, unknown>> {
    const start = Date.parse(args.start_time);
    const now = this.clock.now();
    if (start <= now)
      return {
        status: 'unavailable',
        message: 'that time has already passed',
        alternatives: await this.nextSlots(token, data, now),
      };
    const slots = await this.scheduling.availableTimes(
      token,
      data.eventTypeUri,
      new Date(start),
      new Date(start + 3600_000),
    );
    const slot = slots.find((s) => Date.parse(s.startTime) === start);
    if (!slot)
      return {
        status: 'unavailable',
        message: 'that slot is not free',
        alternatives: await this.nextSlots(token, data, start),
      };
    const { bookingUrl } = await this.scheduling.createBookingLink(token, data.eventTypeUri);
    const startIso = new Date(start).toISOString();
    const url = new URL(bookingUrl);
    if (args.name) url.searchParams.set('name', args.name);
    if (args.email) url.searchParams.set('email', args.email);
    url.searchParams.set('month', startIso.slice(0, 7));
    url.searchParams.set('date', startIso.slice(0, 10));
    return {
      status: 'link_created',
      message: 'send the contact this single-use link to confirm the booking',
      booking_url: url.toString(),
      start_time: startIso,
      event_type: data.eventTypeName,
    };
  }

  private async nextSlots(token: string, data: SchedulingData, after: number): Promise<string[]> {
    const from = Math.max(after, this.clock.now() + 60_000);
    const slots = await this.scheduling.availableTimes(
      token,
      data.eventTypeUri,
      new Date(from),
      new Date(from + 3 * 86_400_000),
    );
    return slots.slice(0, 3).map((s) => s.startTime);
  }

  private view(row: IntegrationsTable): IntegrationView {
    const data = JSON.parse(row.data) as SchedulingData;
    return {
      id: row.id,
      type: row.type,
      data: { ...data, accessToken: maskToken(this.secretBox.openText(row.sealed_token)) },
      createdAt: iso(row.created_at),
    };
  }
}

function firstOf(data: Record<string, string>, names: readonly string[]): string | null {
  for (const name of names) {
    const value = data[name]?.trim();
    if (value) return value;
  }
  return null;
}

/** typebox/value is loaded on the first call (about 80 ms and 10 MB at start-up otherwise). */
async function checked<T>(schema: TSchema, args: unknown, fn: string): Promise<T> {
  const { Value } = await import('typebox/value');
  if (Value.Check(schema, args)) return args as T;
  const first = [...Value.Errors(schema, args)].find((e) => e.keyword !== 'boolean');
  throw invalidInput(`${fn}: ${first ? `${first.instancePath || 'arguments'} ${first.message}` : 'invalid arguments'}`);
}
