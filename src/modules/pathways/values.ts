// A pathway variable's values by its declared type: the JSON Schema the model
// is given for it (set_variables), and the check that turns what arrives (the
// model's arguments, a webhook's answer, a call payload) into the one form
// conditions and templates use: numbers as numbers, dates YYYY-MM-DD, phones
// E.164, enum values as declared.
import type { Static } from 'typebox';
import type { Variable } from './schemas.js';

export type VariableDeclaration = Static<typeof Variable>;
export type VariableValue = string | number | boolean;

/** The longest string a variable holds (a call payload's limit too). */
export const MAX_STRING_LENGTH = 2000;

const DATE = /^(\d{4})-(\d{2})-(\d{2})/;
const E164 = /^\+[1-9]\d{6,14}$/;
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const NUMERIC = /^-?\d+(\.\d+)?$/;

/** The JSON Schema of one variable's value, as set_variables offers it. */
export function variableSchema(name: string, variable: VariableDeclaration): Record<string, unknown> {
  const description = variable.description ?? name.replace(/_/g, ' ');
  switch (variable.type) {
    case 'number':
      return { type: 'number', description };
    case 'boolean':
      return { type: 'boolean', description };
    case 'date':
      return { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: `${description} (a date, YYYY-MM-DD)` };
    case 'phone':
      return {
        type: 'string',
        pattern: E164.source,
        description: `${description} (a phone number in E.164, such as +14155550123)`,
      };
    case 'email':
      return { type: 'string', format: 'email', maxLength: 254, description: `${description} (an email address)` };
    case 'enum':
      return { type: 'string', enum: [...(variable.values ?? [])], description };
    default:
      return { type: 'string', minLength: 1, maxLength: MAX_STRING_LENGTH, description };
  }
}

/** A valid calendar day YYYY-MM-DD from a date or an ISO 8601 time (its day), or null. */
export function asDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = DATE.exec(value.trim());
  if (!m) return null;
  const day = `${m[1]}-${m[2]}-${m[3]}`;
  const parsed = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(day) ? day : null;
}

/** A finite number, from a number or a numeric string ("42", "1,250.5"), or null. */
export function asNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return null;
  const plain = value.trim().replace(/,(?=\d{3}\b)/g, '');
  return NUMERIC.test(plain) ? Number(plain) : null;
}

/**
 * A phone number in E.164, separators (spaces, dashes, dots, brackets)
 * dropped; 10 digits without a + are a North American number (+1), as are
 * 11 starting with 1. Else null.
 */
export function asPhone(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const compact = value.trim().replace(/[\s().-]/g, '');
  if (E164.test(compact)) return compact;
  if (/^\d{10}$/.test(compact)) return `+1${compact}`;
  if (/^1\d{10}$/.test(compact)) return `+${compact}`;
  return null;
}

/**
 * `raw` as a value of `variable`, or the problem (for the model: "must be a
 * date (YYYY-MM-DD)"). Lenient where the meaning is plain: "42" for a
 * number, "true" for a boolean, an enum value in any case, a phone with
 * separators, a string given a number.
 */
export function toVariableValue(
  variable: VariableDeclaration,
  raw: unknown,
): { value: VariableValue } | { problem: string } {
  switch (variable.type) {
    case 'number': {
      const n = asNumber(raw);
      return n === null ? { problem: 'must be a number' } : { value: n };
    }
    case 'boolean':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
      return { problem: 'must be true or false' };
    case 'date': {
      const day = asDate(raw);
      return day === null ? { problem: 'must be a date (YYYY-MM-DD)' } : { value: day };
    }
    case 'phone': {
      const phone = asPhone(raw);
      return phone === null ? { problem: 'must be a phone number in E.164 (such as +14155550123)' } : { value: phone };
    }
    case 'email': {
      const email = typeof raw === 'string' ? raw.trim() : '';
      return EMAIL.test(email) && email.length <= 254 ? { value: email } : { problem: 'must be an email address' };
    }
    case 'enum': {
      const values = variable.values ?? [];
      const found =
        typeof raw === 'string' ? values.find((v) => v.toLowerCase() === raw.trim().toLowerCase()) : undefined;
      return found === undefined
        ? { problem: `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}` }
        : { value: found };
    }
    default: {
      const text =
        typeof raw === 'number' || typeof raw === 'boolean' ? String(raw) : typeof raw === 'string' ? raw.trim() : null;
      if (text === null || text === '') return { problem: 'must be a non-empty string' };
      return text.length > MAX_STRING_LENGTH
        ? { problem: `must be at most ${MAX_STRING_LENGTH} characters` }
        : { value: text };
    }
  }
}

/** True when a variable has a value (absent, null and "" are none, as templates read them). */
export const hasValue = (value: unknown) => value !== undefined && value !== null && value !== '';
