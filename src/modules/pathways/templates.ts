// `{{name}}` templates (DESIGN.md "Custom tools and call variables"): the names
// a text uses, which of them are always known, and filling a text in.

/** `{{ name }}`, spaces inside the braces allowed; `{{ }}` is no placeholder. */
const PLACEHOLDER = /\{\{\s*([^{}\s][^{}]*?)\s*\}\}/g;

/** Names every call knows, so no pathway declares them. */
export const RESERVED_NAMES = ['contact', 'now'] as const;

/** The names a text's placeholders use, in order, each once. */
export function templateNames(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

/** True for the names filled from the call itself: `contact.name`, `contact.phone`, `contact.fields.X`, `now`. */
export function isCallName(name: string): boolean {
  return (
    name === 'now' || name === 'contact.name' || name === 'contact.phone' || /^contact\.fields\.[^\s.]+$/.test(name)
  );
}

export interface TemplateContext {
  /** The call's variables so far (payload, contact fields, what the call collected). */
  variables: Record<string, unknown>;
  contact?: { name?: string | null; phone?: string | null; fields?: Record<string, unknown> | null } | null;
  /** The moment `{{now}}` names (filled as ISO 8601 UTC to the second). */
  now: Date | number;
}

export interface FilledTemplate {
  text: string;
  /** Names that had no value (each once): they were filled with nothing. */
  unknown: string[];
}

/**
 * Fills every placeholder of `text`. A name with no value stays empty and is
 * listed in `unknown` (the call record's warnings). `escape: 'json'` escapes
 * each value for use inside a JSON string (a webhook body template).
 */
export function fillTemplate(
  text: string,
  context: TemplateContext,
  options: { escape?: 'json' } = {},
): FilledTemplate {
  const unknown = new Set<string>();
  const filled = text.replace(PLACEHOLDER, (_match, name: string) => {
    const value = valueOf(name, context);
    if (value === undefined || value === null || value === '') {
      unknown.add(name);
      return '';
    }
    const rendered = render(value);
    return options.escape === 'json' ? JSON.stringify(rendered).slice(1, -1) : rendered;
  });
  return { text: filled, unknown: [...unknown] };
}

function valueOf(name: string, { variables, contact, now }: TemplateContext): unknown {
  if (name === 'now') return new Date(now).toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (name === 'contact.name') return contact?.name;
  if (name === 'contact.phone') return contact?.phone;
  if (name.startsWith('contact.fields.')) {
    const fields = contact?.fields;
    const key = name.slice('contact.fields.'.length);
    return fields && Object.hasOwn(fields, key) ? fields[key] : undefined;
  }
  return Object.hasOwn(variables, name) ? variables[name] : undefined;
}

function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}
