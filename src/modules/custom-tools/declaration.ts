// A custom HTTP tool as an agent record, a call payload or a pathway node
// declares it (DESIGN.md "Custom tools and call variables"), and the parser
// that turns what a customer wrote into a checked declaration, or a 400
// `invalid_input` whose message names the path of the first problem
// (`tools[1].parameters: …`). Header values are still in clear here: the
// service seals them (CustomToolService.declare).
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { invalidInput } from '../../http/errors.js';
import { MAX_HEADERS, headerProblem } from './headers.js';
import { parseJsonPath } from './json-path.js';
import type { ParameterSchemas } from './parameters.js';

export const DEFAULT_TIMEOUT_MS = 5000;
export const MAX_TIMEOUT_MS = 20_000;
export const MIN_TIMEOUT_MS = 100;
/** Tools one call may declare (each goes to the model on every turn). */
export const MAX_TOOLS = 32;
const TOOL_NAME = '^[a-z0-9_]{1,64}$';
/** A call variable's name, as `{{name}}` templates name it. */
export const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export const HttpToolDeclaration = Type.Object(
  {
    type: Type.Literal('http'),
    name: Type.String({
      pattern: TOOL_NAME,
      description: 'a-z, 0-9 and _; unique among the tools of a call',
      example: 'check_order',
    }),
    description: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'What the tool does and when to use it (the model reads it)',
    }),
    parameters: Type.Object(
      { type: Type.Literal('object') },
      {
        additionalProperties: true,
        description: 'A JSON Schema of type object; the arguments are checked against it before any request',
      },
    ),
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'http(s); goes through the webhook address filter',
      example: 'https://api.example.com/orders/lookup',
    }),
    method: Type.Optional(Type.Enum(['POST', 'GET'], { default: 'POST' })),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        maxProperties: MAX_HEADERS,
        description: 'Sent with each request; values are stored encrypted and answered as ****',
      }),
    ),
    timeoutMs: Type.Optional(
      Type.Integer({
        minimum: MIN_TIMEOUT_MS,
        maximum: MAX_TIMEOUT_MS,
        default: DEFAULT_TIMEOUT_MS,
        description: 'The whole budget of one use, a retry included',
      }),
    ),
    speak: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'Said when the tool takes over 1 s' }),
    ),
    assign: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        maxProperties: 50,
        description: 'Call variables copied from the answer: { var: "$.json.path" }',
      }),
    ),
    keywords: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 50,
        description: 'Words that make the sandbox dialogue engine call the tool',
      }),
    ),
  },
  { additionalProperties: false },
);

export type HttpToolInput = Static<typeof HttpToolDeclaration>;

/** A checked declaration with its defaults filled in; header values still in clear. */
export interface DeclaredHttpTool {
  type: 'http';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  timeoutMs: number;
  speak?: string;
  assign: Record<string, string>;
  keywords: string[];
}

/** One tool, or a 400 `invalid_input` naming `path` and the field at fault. */
export function parseHttpTool(input: unknown, path: string, schemas: ParameterSchemas): DeclaredHttpTool {
  if (!Value.Check(HttpToolDeclaration, input)) throw invalidInput(describeFirstError(input, path));
  const tool = input as HttpToolInput;
  const parametersProblem = schemas.problem(tool.parameters);
  if (parametersProblem) throw invalidInput(`${path}.parameters ${parametersProblem}`);
  const headers = tool.headers ?? {};
  const seen = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    const problem =
      headerProblem(name, value) ??
      (seen.has(name.toLowerCase()) ? 'is given twice (header names are case-insensitive)' : null);
    if (problem) throw invalidInput(`${path}.headers${step(name)} ${problem}`);
    seen.add(name.toLowerCase());
  }
  const assign = tool.assign ?? {};
  for (const [variable, jsonPath] of Object.entries(assign)) {
    if (!VARIABLE_NAME.test(variable))
      throw invalidInput(
        `${path}.assign${step(variable)} is not a variable name (a letter or _, then letters, digits or _)`,
      );
    const steps = parseJsonPath(jsonPath);
    if (typeof steps === 'string') throw invalidInput(`${path}.assign.${variable} ${steps}`);
  }
  return {
    type: 'http',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters as Record<string, unknown>,
    url: tool.url,
    method: (tool.method as 'POST' | 'GET' | undefined) ?? 'POST',
    headers,
    timeoutMs: tool.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(tool.speak !== undefined ? { speak: tool.speak } : {}),
    assign,
    keywords: tool.keywords ?? [],
  };
}

/** A list of tools (`path` names the list, `tools`); names unique, and none of `taken` (the call's built-in tools). */
export function parseHttpTools(
  input: unknown,
  path: string,
  schemas: ParameterSchemas,
  taken: Iterable<string> = [],
): DeclaredHttpTool[] {
  if (!Array.isArray(input)) throw invalidInput(`${path} must be an array of tools`);
  if (input.length > MAX_TOOLS) throw invalidInput(`${path} has more than ${MAX_TOOLS} tools`);
  const names = new Set(taken);
  return input.map((item, index) => {
    const tool = parseHttpTool(item, `${path}[${index}]`, schemas);
    if (names.has(tool.name))
      throw invalidInput(`${path}[${index}].name "${tool.name}" is already the name of another tool of this call`);
    names.add(tool.name);
    return tool;
  });
}

/** `.name`, or `["odd name"]` when it is not a plain identifier. */
function step(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** A JSON pointer (`/headers/0`) as a path after `base` (`tools[0].headers[0]`). */
function pathOf(base: string, pointer: string): string {
  if (!pointer) return base;
  return (
    base +
    pointer
      .slice(1)
      .split('/')
      .map((raw) => {
        const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
        return /^\d+$/.test(key) ? `[${key}]` : step(key);
      })
      .join('')
  );
}

function describeFirstError(input: unknown, path: string): string {
  // `boolean` errors repeat an additionalProperties error at the unknown field itself.
  const error = [...Value.Errors(HttpToolDeclaration, input)].find((e) => e.keyword !== 'boolean');
  if (!error) return `${path} is not a valid tool`;
  const at = pathOf(path, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at} is missing ${(params.requiredProperties as string[]).join(', ')}`;
    case 'additionalProperties':
      return `${at} has an unknown field "${(params.additionalProperties as string[])[0]}"`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `${at} must be ${JSON.stringify(params.allowedValue)}`;
    case 'pattern':
      return error.instancePath === '/name' ? `${at} must be 1 to 64 of a-z, 0-9 and _` : `${at} ${error.message}`;
    default:
      return `${at} ${error.message}`;
  }
}
