// An agent's `analysis` settings (DESIGN.md "Post-call analysis and
// analytics"): whether a summary is written, what counts as success, the
// fields to collect (a small JSON Schema: flat, of plain types, so a model
// and the sandbox analyser can both fill it and a store can index it) and
// whether open requests become tasks. Read where agents are read: strictly
// in a call payload (400 naming the field), leniently in a stored record.
import { Type } from 'typebox';
import { invalidInput } from '../../http/errors.js';

export interface AnalysisSettings {
  /** Default true. */
  summary?: boolean;
  successCriteria?: string;
  /** A JSON Schema of type object: at most 50 properties of the plain types below. */
  schema?: AnalysisSchema;
  /** Default true: a task for each request the call left open. */
  tasks?: boolean;
}

export interface AnalysisProperty {
  type: 'string' | 'number' | 'integer' | 'boolean';
  description?: string;
  enum?: string[];
  format?: 'date';
}

export interface AnalysisSchema {
  type: 'object';
  properties: Record<string, AnalysisProperty>;
  required?: string[];
}

export const MAX_ANALYSIS_PROPERTIES = 50;
const MAX_CRITERIA = 2000;
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const AnalysisSettingsSchema = Type.Object(
  {
    summary: Type.Optional(Type.Boolean({ description: 'Write a summary (default true)' })),
    successCriteria: Type.Optional(
      Type.String({ maxLength: MAX_CRITERIA, description: 'What a successful call is, in words' }),
    ),
    schema: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'A JSON Schema of type object: at most 50 properties of type string, number, integer or boolean (a string may have `enum` or `format: "date"`), optional `required`; the fields to collect into `data`',
        },
      ),
    ),
    tasks: Type.Optional(Type.Boolean({ description: 'A task for each request left open (default true)' })),
  },
  {
    additionalProperties: false,
    description: 'Post-call analysis of the agent\'s calls (DESIGN "Post-call analysis")',
    examples: [
      {
        successCriteria: 'The caller booked a meeting',
        schema: {
          type: 'object',
          properties: { preferred_day: { type: 'string', format: 'date' }, party_size: { type: 'integer' } },
        },
      },
    ],
  },
);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why `input` is not analysis settings (`path message`), or the settings. */
export function readAnalysisSettings(input: unknown, path: string): AnalysisSettings | string {
  if (!isObject(input)) return `${path} must be an object`;
  const settings: AnalysisSettings = {};
  for (const key of Object.keys(input))
    if (!['summary', 'successCriteria', 'schema', 'tasks'].includes(key)) return `${path}.${key} is not a setting`;
  for (const key of ['summary', 'tasks'] as const) {
    if (input[key] === undefined) continue;
    if (typeof input[key] !== 'boolean') return `${path}.${key} must be a boolean`;
    settings[key] = input[key];
  }
  if (input.successCriteria !== undefined) {
    if (typeof input.successCriteria !== 'string' || input.successCriteria.length > MAX_CRITERIA)
      return `${path}.successCriteria must be a string of at most ${MAX_CRITERIA} characters`;
    if (input.successCriteria.trim()) settings.successCriteria = input.successCriteria.trim();
  }
  if (input.schema !== undefined) {
    const schema = readSchema(input.schema, `${path}.schema`);
    if (typeof schema === 'string') return schema;
    settings.schema = schema;
  }
  return settings;
}

/** Strict: a call payload's `agent.analysis` (400 naming the field). */
export function parseAnalysisSettings(input: unknown, path = 'agent.analysis'): AnalysisSettings {
  const read = readAnalysisSettings(input, path);
  if (typeof read === 'string') throw invalidInput(read);
  return read;
}

function readSchema(input: unknown, path: string): AnalysisSchema | string {
  if (!isObject(input) || input.type !== 'object' || !isObject(input.properties))
    return `${path} must be a JSON Schema of type "object" with properties`;
  const entries = Object.entries(input.properties);
  if (entries.length > MAX_ANALYSIS_PROPERTIES)
    return `${path} has ${entries.length} properties: at most ${MAX_ANALYSIS_PROPERTIES}`;
  const properties: Record<string, AnalysisProperty> = {};
  for (const [name, raw] of entries) {
    const at = `${path}.properties.${name}`;
    if (!NAME.test(name)) return `${at}: a property is named by a letter or _, then up to 63 letters, digits or _`;
    if (!isObject(raw) || !['string', 'number', 'integer', 'boolean'].includes(raw.type as string))
      return `${at} must have type string, number, integer or boolean`;
    const property: AnalysisProperty = { type: raw.type as AnalysisProperty['type'] };
    if (raw.description !== undefined) {
      if (typeof raw.description !== 'string' || raw.description.length > 500)
        return `${at}.description must be a string of at most 500 characters`;
      property.description = raw.description;
    }
    if (raw.enum !== undefined) {
      const values = raw.enum;
      if (
        property.type !== 'string' ||
        !Array.isArray(values) ||
        values.length === 0 ||
        values.length > 50 ||
        !values.every((v) => typeof v === 'string' && v.length > 0 && v.length <= 200)
      )
        return `${at}.enum must be a list of 1 to 50 strings, on a string property`;
      property.enum = values as string[];
    }
    if (raw.format !== undefined) {
      if (property.type !== 'string' || raw.format !== 'date') return `${at}.format may only be "date", on a string`;
      property.format = 'date';
    }
    properties[name] = property;
  }
  const schema: AnalysisSchema = { type: 'object', properties };
  if (input.required !== undefined) {
    if (!Array.isArray(input.required) || !input.required.every((n) => typeof n === 'string' && n in properties))
      return `${path}.required must list properties of the schema`;
    schema.required = input.required as string[];
  }
  return schema;
}

/** The JSON Schema `data` is validated against: the fields as declared, nothing else, dates as YYYY-MM-DD. */
export function dataSchema(schema: AnalysisSchema | undefined): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const [name, p] of Object.entries(schema?.properties ?? {}))
    properties[name] =
      p.format === 'date'
        ? {
            type: 'string',
            pattern: '^\\d{4}-\\d{2}-\\d{2}$',
            ...(p.description ? { description: p.description } : {}),
          }
        : p;
  return {
    type: 'object',
    properties,
    additionalProperties: false,
    ...(schema?.required?.length ? { required: schema.required } : {}),
  };
}
