// What one stream asks for: event types (the path) and payload filters (the
// query string). Parsed once when the stream opens, applied to every event.
import { invalidInput } from '../../http/errors.js';
import { WildcardPattern } from '../../lib/wildcard.js';
import { EVENT_TYPES, type EventType } from './recorder.js';
import type { StreamEvent } from './stream-event.js';

/** Path values that select every event type. */
export const ALL_TYPES = ['all', '*'] as const;
/** Query parameters that are not payload filters. */
export const RESERVED_QUERY = ['lastEventId', 'ticket'] as const;

/**
 * Filter names that reach a field of another name in some event types: every
 * event about an object names it `object_id`, except `object_created`, whose
 * payload (spec 6) calls it `id`. `?object_id=X` follows object X through all
 * its events, its creation included (docs/decisions/events.md).
 */
const FIELD_ALIASES: Record<string, Record<string, string>> = { object_created: { object_id: 'id' } };

const MAX_FILTERS = 20;
const MAX_VALUES = 20;
const MAX_VALUE_LENGTH = 256;
const FIELD_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

interface FieldFilter {
  field: string;
  /** The event matches when the field's value matches any of these. */
  patterns: Array<string | WildcardPattern>;
}

export interface EventSelection {
  /** null: every type. */
  types: readonly EventType[] | null;
  filters: FieldFilter[];
}

/** `object_created`, `object_created,object_deleted`, or `all` / `*`. */
export function parseTypes(param: string): readonly EventType[] | null {
  if ((ALL_TYPES as readonly string[]).includes(param)) return null;
  const names = [...new Set(param.split(',').map((s) => s.trim()))];
  const unknown = names.filter((n) => !(EVENT_TYPES as readonly string[]).includes(n));
  if (unknown.length || names.length === 0) {
    throw invalidInput(
      `unknown event type "${unknown[0] ?? param}": use one of ${EVENT_TYPES.join(', ')} (or several, comma-separated), or "all"`,
    );
  }
  return names as EventType[];
}

/** Every query parameter except the reserved ones filters a payload field: exact text, `*` matching any run of characters. */
export function parseFilters(query: Record<string, unknown>): FieldFilter[] {
  const filters: FieldFilter[] = [];
  for (const [field, raw] of Object.entries(query)) {
    if ((RESERVED_QUERY as readonly string[]).includes(field)) continue;
    if (!FIELD_NAME.test(field))
      throw invalidInput(
        `filter "${field.slice(0, 100)}": a field name is letters, digits, "_", "-" or "." (for nested fields)`,
      );
    const values = Array.isArray(raw) ? raw : [raw];
    if (values.length > MAX_VALUES) throw invalidInput(`filter "${field}": at most ${MAX_VALUES} values`);
    const patterns = values.map((value) => {
      if (typeof value !== 'string' || value.length > MAX_VALUE_LENGTH)
        throw invalidInput(`filter "${field}": a value is text of at most ${MAX_VALUE_LENGTH} characters`);
      return compilePattern(value);
    });
    filters.push({ field, patterns });
  }
  if (filters.length > MAX_FILTERS) throw invalidInput(`at most ${MAX_FILTERS} filters`);
  return filters;
}

/** Never a RegExp: a pattern with many `*` made one backtrack for minutes (linear-time matcher instead). */
function compilePattern(value: string): string | WildcardPattern {
  return value.includes('*') ? new WildcardPattern(value) : value;
}

/**
 * The field's value as filter text: strings as they are, numbers and booleans
 * as written in JSON. A missing field, null, an object or an array has no text,
 * so a filter on it never matches. `a.b` reaches into nested objects when the
 * payload has no field literally named `a.b`.
 */
function fieldText(payload: Record<string, unknown>, field: string, type: string): string | null {
  let value: unknown = payload[field];
  const alias = FIELD_ALIASES[type]?.[field];
  if (value === undefined && alias !== undefined) value = payload[alias];
  if (value === undefined && field.includes('.')) {
    value = field
      .split('.')
      .reduce<unknown>(
        (node, key) =>
          node && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined,
        payload,
      );
  }
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

export function matchesType(selection: EventSelection, type: string): boolean {
  return selection.types === null || (selection.types as readonly string[]).includes(type);
}

export function matchesPayload(selection: EventSelection, event: StreamEvent): boolean {
  if (selection.filters.length === 0) return true;
  const payload = event.payload;
  return selection.filters.every(({ field, patterns }) => {
    const text = fieldText(payload, field, event.type);
    if (text === null) return false;
    return patterns.some((p) => (typeof p === 'string' ? p === text : p.matches(text)));
  });
}

/** Equal for selections that accept the same events (the broker tests such streams once per event). */
export function selectionKey(selection: EventSelection): string {
  const types = selection.types ? [...selection.types].sort() : null;
  const filters = selection.filters.map((f) => [
    f.field,
    f.patterns.map((p) => (typeof p === 'string' ? `=${p}` : `~${p.source}`)),
  ]);
  return JSON.stringify([types, filters]);
}
