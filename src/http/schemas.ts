// Schemas shared by many routes.
import { Type, type Static } from 'typebox';

export const ErrorResponse = Type.Object(
  {
    message: Type.String({ description: 'Human-readable explanation' }),
    code: Type.String({ description: 'Stable machine-readable error code' }),
  },
  { $id: 'ErrorResponse', additionalProperties: true, description: 'Error answer' },
);
export type ErrorResponse = Static<typeof ErrorResponse>;

const errorRef = Type.Ref('ErrorResponse');

/** Error answers to document on a route, by status. */
export function errors<const S extends readonly number[]>(...statuses: S): { [K in S[number]]: typeof errorRef } {
  const out = {} as { [K in S[number]]: typeof errorRef };
  for (const s of statuses) (out as Record<number, typeof errorRef>)[s] = errorRef;
  return out;
}

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

export const Email = Type.String({ format: 'email', maxLength: 254 });
