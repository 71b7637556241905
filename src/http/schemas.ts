// Schemas shared by many routes.
import { Type, type Static, type TSchema } from 'typebox';
import { type ErrorField, describeCode } from './error-docs.js';
import { type ErrorCode, errorStatus } from './errors.js';

export const ErrorResponse = Type.Object(
  {
    message: Type.String({ description: 'Human-readable explanation' }),
    code: Type.String({ description: 'Stable machine-readable error code' }),
  },
  { $id: 'ErrorResponse', additionalProperties: true, description: 'Error answer' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

const errorRef = Type.Ref('ErrorResponse');

/**
 * A route's error answers, by the codes its service can throw:
 * `response: { 200: ok(...), ...errorResponses('not_found', 'conflict') }`.
 * Codes implied by the route's shape (validation, body limits, auth) are added
 * by the OpenAPI transform (src/http/openapi.ts); list only the others.
 */
/** An error code whose answer on this route carries fields of its own (see errorWith). */
export interface ErrorWithFields {
  code: ErrorCode;
  fields: Record<string, ErrorField>;
}

/**
 * A code whose answer on this route carries extra fields (the AppError's
 * `extra`): `errorResponses('not_found', errorWith('conflict', { url: { schema: { type: 'string' }, example: '…' } }))`.
 * Fields every answer of a code carries go to `errorFields` (src/http/error-docs.ts) instead.
 */
export const errorWith = (code: ErrorCode, fields: Record<string, ErrorField>): ErrorWithFields => ({ code, fields });

type CodeOf<E> = E extends ErrorWithFields ? E['code'] : E;

export function errorResponses<const C extends readonly (ErrorCode | ErrorWithFields)[]>(
  ...codes: C
): { [K in (typeof errorStatus)[CodeOf<C[number]> & ErrorCode]]: TSchema } {
  const byStatus = new Map<number, Array<ErrorCode | ErrorWithFields>>();
  for (const entry of codes) {
    const status = errorStatus[typeof entry === 'string' ? entry : entry.code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), entry]);
  }
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) {
    const examples = list.map((entry) =>
      typeof entry === 'string'
        ? { message: describeCode(entry), code: entry }
        : {
            message: describeCode(entry.code),
            code: entry.code,
            ...Object.fromEntries(Object.entries(entry.fields).map(([name, f]) => [name, f.example])),
          },
    );
    const withFields = list.filter((entry): entry is ErrorWithFields => typeof entry !== 'string');
    if (withFields.length === 0) {
      out[status] = Type.Ref('ErrorResponse', { examples });
      continue;
    }
    // `{ message, code }` and the fields (optional: other codes of this status do not send them); extra fields still pass.
    const properties: Record<string, unknown> = { message: { type: 'string' }, code: { type: 'string' } };
    for (const entry of withFields) for (const [name, f] of Object.entries(entry.fields)) properties[name] = f.schema;
    out[status] = {
      type: 'object',
      required: ['message', 'code'],
      properties,
      additionalProperties: true,
      description: 'Error answer',
      examples,
    };
  }
  return out as { [K in (typeof errorStatus)[CodeOf<C[number]> & ErrorCode]]: TSchema };
}

/**
 * A success answer, named and with an example, as the docs show it:
 * `200: ok(ApiKey, 'The new key', { id: '…', … })`. The example is checked
 * against the schema by `redocly lint`.
 */
export function ok<T extends TSchema>(schema: T, description: string, example?: Static<T>): T {
  return { ...schema, description, ...(example === undefined ? {} : { examples: [example] }) } as T;
}

/** Error answers by status; their codes are documented as each status's usual code. Prefer errorResponses. */
export function errors<const S extends readonly number[]>(...statuses: S): { [K in S[number]]: typeof errorRef } {
  const out = {} as { [K in S[number]]: typeof errorRef };
  for (const s of statuses) (out as Record<number, typeof errorRef>)[s] = errorRef;
  return out;
}

/**
 * On a body schema: the route accepts a request without a body (its
 * preValidation supplies `{}`); the document then says `requestBody.required: false`.
 */
export const OPTIONAL_BODY = 'x-optional-body';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export const Email = Type.String({ format: 'email', maxLength: 254 });
