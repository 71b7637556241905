// Schemas shared by many routes.
import { Type, type Static, type TSchema } from 'typebox';
import { describeCode } from './error-docs.js';
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
export function errorResponses<const C extends readonly ErrorCode[]>(...codes: C): { [K in (typeof errorStatus)[C[number]]]: typeof errorRef } {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  const out: Record<number, unknown> = {};
  for (const [status, list] of byStatus) out[status] = Type.Ref('ErrorResponse', { examples: list.map((code) => ({ message: describeCode(code), code })) });
  return out as { [K in (typeof errorStatus)[C[number]]]: typeof errorRef };
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

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export const Email = Type.String({ format: 'email', maxLength: 254 });
