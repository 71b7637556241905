// `if` conditions on variables, decided by the server (DESIGN.md
// "Conversational pathways"): `{ var, op: eq|ne|gt|lt|exists|in, value? }`,
// compared by the variable's declared type.
import type { Condition } from './schemas.js';
import { type VariableDeclaration, asDate, asNumber, asPhone, hasValue } from './values.js';

/**
 * Whether `condition` holds for `variables`. A variable with no value makes
 * every condition but `exists` false (`ne` too: an answer not given yet is no
 * answer that differs). Numbers compare as numbers, dates as days, phones
 * as E.164, strings, emails and enum values without regard to case or
 * surrounding spaces, booleans as they are.
 */
export function conditionHolds(
  condition: Condition,
  variables: Readonly<Record<string, unknown>>,
  declared: Readonly<Record<string, VariableDeclaration>>,
): boolean {
  const value = Object.hasOwn(variables, condition.var) ? variables[condition.var] : undefined;
  if (condition.op === 'exists') return hasValue(value);
  if (!hasValue(value)) return false;
  const type = Object.hasOwn(declared, condition.var) ? declared[condition.var]!.type : 'string';
  const key = comparable(type, value);
  if (key === null) return false;
  const expected = condition.value;
  switch (condition.op) {
    case 'eq':
      return key === comparable(type, expected);
    case 'ne':
      return key !== comparable(type, expected);
    case 'in':
      return Array.isArray(expected) && expected.some((item) => key === comparable(type, item));
    case 'gt':
    case 'lt': {
      const other = comparable(type, expected);
      if (typeof key !== 'number' || typeof other !== 'number') return false;
      return condition.op === 'gt' ? key > other : key < other;
    }
    default:
      return false;
  }
}

/** A value in the form its type compares by: numbers and dates as numbers (a date as its UTC midnight), the rest as canonical strings or booleans. */
function comparable(type: VariableDeclaration['type'], value: unknown): string | number | boolean | null {
  switch (type) {
    case 'number':
      return asNumber(value);
    case 'date': {
      const day = asDate(value);
      return day === null ? null : Date.parse(`${day}T00:00:00Z`);
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : null;
    case 'phone':
      return asPhone(value);
    default:
      return typeof value === 'string' || typeof value === 'number' ? String(value).trim().toLowerCase() : null;
  }
}
