// Checks an event payload against the schema the OpenAPI document publishes for
// its type (src/modules/events/payloads.ts; closed: no field the schema lacks).
// Tests that drive a real writer (data plane, SMS callbacks, calls, the voice
// agent) check what it recorded with it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { eventPayloadSchemas } from '../../src/modules/events/payloads.js';
import type { EventType } from '../../src/modules/events/recorder.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);
const validators = new Map(
  Object.entries(eventPayloadSchemas).map(([type, schema]) => [type, ajv.compile(schema as object)]),
);

/** The ways `payload` departs from its type's schema; [] when it matches. */
export function eventPayloadErrors(type: string, payload: unknown): string[] {
  const validate = validators.get(type as EventType);
  if (!validate) return [`no schema for event type ${type}`];
  return validate(payload)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Every event of the user in the log, each with its schema's complaints (none expected). */
export async function loggedEventErrors(
  db: Kysely<Database>,
  userId: string,
): Promise<{ types: string[]; errors: string[] }> {
  const rows = await db
    .selectFrom('events')
    .select(['type', 'payload'])
    .where('user_id', '=', userId)
    .orderBy('id')
    .execute();
  return {
    types: [...new Set(rows.map((r) => r.type))].sort(),
    errors: rows.flatMap((r) =>
      eventPayloadErrors(r.type, JSON.parse(String(r.payload))).map((e) => `${r.type}: ${e}`),
    ),
  };
}
