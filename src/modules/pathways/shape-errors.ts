// A schema's errors for a value, as issues a person can act on: one per place
// (a missing field at the field's own path, an unknown field named, a union
// as one "must be string or object" rather than one line per member). Ajv with
// allErrors, because TypeBox's Value.Errors stops at a global maximum of 8.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { TSchema } from 'typebox';
import type { PathwayIssue } from './schemas.js';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiled = new WeakMap<TSchema, ValidateFunction>();

/** A JSON pointer's token for a key (RFC 6901: `~` → `~0`, `/` → `~1`). */
export const pointerToken = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

/** True when `path` is `value` or lies inside it. */
const within = (path: string, value: string) => path === value || path.startsWith(`${value}/`);

const MESSAGES: Record<string, (e: ErrorObject) => string> = {
  enum: (e) => `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
  const: (e) => `must be ${JSON.stringify(e.params.allowedValue)}`,
  pattern: (e) => `must match ${String(e.params.pattern)}`,
};

/** Every error of `value` against `schema`, its paths under `prefix`. */
export function shapeErrors(schema: TSchema, value: unknown, prefix = ''): PathwayIssue[] {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  return validate(value) ? [] : describe(validate.errors ?? [], prefix);
}

/** A member error of `union` (Ajv's union path is `…/anyOf`, its members' `…/anyOf/<n>/…`), for the same value. */
const inside = (e: ErrorObject, union: ErrorObject) =>
  e !== union && e.schemaPath.startsWith(`${union.schemaPath}/`) && within(e.instancePath, union.instancePath);

function describe(errors: ErrorObject[], prefix: string): PathwayIssue[] {
  const unions = errors.filter((e) => e.keyword === 'anyOf');
  const outer = unions.filter((u) => !unions.some((o) => inside(u, o)));
  const issues: PathwayIssue[] = [];
  for (const e of errors) {
    // A union's members each complain; the union speaks for them.
    if (outer.some((u) => inside(e, u))) continue;
    const path = prefix + e.instancePath;
    if (e.keyword === 'anyOf') issues.push(...describeUnion(errors, e, prefix));
    else if (e.keyword === 'required')
      issues.push({ path: `${path}/${pointerToken(String(e.params.missingProperty))}`, message: 'is required' });
    else if (e.keyword === 'additionalProperties')
      issues.push({
        path: `${path}/${pointerToken(String(e.params.additionalProperty))}`,
        message: 'is not a field here',
      });
    else issues.push({ path, message: MESSAGES[e.keyword]?.(e) ?? e.message ?? 'is not valid' });
  }
  return issues;
}

/**
 * A value no member of a union accepts: the errors of the first member of its
 * kind (an inline tool missing its description), or else "must be string or
 * object" from the members' type errors.
 */
function describeUnion(errors: ErrorObject[], union: ErrorObject, prefix: string): PathwayIssue[] {
  const byMember = new Map<string, ErrorObject[]>();
  for (const e of errors) {
    if (!inside(e, union)) continue;
    const index = e.schemaPath.slice(union.schemaPath.length + 1).split('/')[0]!;
    byMember.set(index, [...(byMember.get(index) ?? []), e]);
  }
  const rootOf = (index: string) => `${union.schemaPath}/${index}/`;
  const wrongKind = (index: string, e: ErrorObject) =>
    e.instancePath === union.instancePath &&
    (e.schemaPath === `${rootOf(index)}type` || e.schemaPath === `${rootOf(index)}const`);
  for (const [index, list] of byMember) if (!list.some((e) => wrongKind(index, e))) return describe(list, prefix);
  const types = [
    ...new Set(
      [...byMember].flatMap(([index, list]) =>
        list.filter((e) => wrongKind(index, e) && e.keyword === 'type').map((e) => String(e.params.type)),
      ),
    ),
  ];
  const message =
    types.length === 0
      ? 'matches none of the allowed forms'
      : `must be ${types.length === 1 ? types[0] : `${types.slice(0, -1).join(', ')} or ${types.at(-1)}`}`;
  return [{ path: prefix + union.instancePath, message }];
}
