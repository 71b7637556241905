// The pathway validator: every error and warning of a document, each with its
// path (a JSON pointer). Shape first (a node against its own type's schema),
// then what a schema cannot say: ids, references to nodes and variables,
// templates, conditions, and the graph (graph.ts).
import { Type } from 'typebox';
import { VARIABLE_NAME } from '../custom-tools/declaration.js';
import { headerProblem } from '../custom-tools/headers.js';
import { parseJsonPath } from '../custom-tools/json-path.js';
import { graphIssues } from './graph.js';
import {
  type PathwayIssue,
  CONDITION_OPS,
  MAX_EDGES,
  MAX_NODES,
  NODE_SCHEMAS,
  NODE_TYPES,
  type NodeType,
  PathwayShell,
  VARIABLE_TYPES,
} from './schemas.js';
import { pointerToken, shapeErrors } from './shape-errors.js';
import { RESERVED_NAMES, isCallName, templateNames } from './templates.js';

export interface ValidateOptions {
  /** Why an inline tool's `parameters` cannot be used (it does not compile, …), or null: the custom tools' ParameterSchemas.problem. */
  parametersProblem?: (schema: unknown) => string | null;
}

export interface PathwayCheck {
  errors: PathwayIssue[];
  warnings: PathwayIssue[];
}

type Json = Record<string, unknown>;
type Variables = Map<string, { type?: unknown; values?: unknown }>;

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const quoted = (v: unknown) => JSON.stringify(v);

/** The fields of each node type that are templates. */
const TEMPLATE_FIELDS: Record<NodeType, string[]> = {
  conversation: ['say', 'prompt'],
  webhook: ['body'],
  transfer: ['say'],
  digits: [],
  sms: ['text'],
  end: ['say'],
};

const NO_KEYWORDS = 'a `when` edge without keywords: the sandbox dialogue engine cannot take it';

/** A node of an unknown type is still checked for its id. */
const NodeIdentity = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Every error and warning of `input` as a pathway document; valid when `errors` is empty. */
export function validatePathway(input: unknown, options: ValidateOptions = {}): PathwayCheck {
  if (!isRecord(input)) return { errors: [{ path: '', message: 'a pathway is a JSON object' }], warnings: [] };
  // Too large to run: said alone, before any work proportional to the size.
  const sizes: PathwayIssue[] = [];
  for (const [field, max] of [
    ['nodes', MAX_NODES],
    ['edges', MAX_EDGES],
    ['global', MAX_EDGES],
  ] as const) {
    const list = input[field];
    if (Array.isArray(list) && list.length > max)
      sizes.push({ path: `/${field}`, message: `has ${list.length} items: at most ${max}` });
  }
  if (sizes.length) return { errors: sizes, warnings: [] };

  const errors = shapeErrors(PathwayShell, input);
  const warnings: PathwayIssue[] = [];
  const variables = declaredVariables(input.variables, errors);
  const nodes = Array.isArray(input.nodes) ? input.nodes : [];
  const edges = Array.isArray(input.edges) ? input.edges.filter(isRecord) : [];
  const global = Array.isArray(input.global) ? input.global : [];

  const ids = new Map<string, number>();
  nodes.forEach((node, i) => {
    const at = `/nodes/${i}`;
    checkNode(node, at, { variables, errors, ...options });
    if (!isRecord(node) || typeof node.id !== 'string' || node.id === '') return;
    const first = ids.get(node.id);
    if (first === undefined) ids.set(node.id, i);
    else errors.push({ path: `${at}/id`, message: `duplicate id ${quoted(node.id)} (first at /nodes/${first})` });
  });
  const unknownNode = (id: unknown, path: string) => {
    if (typeof id === 'string' && id !== '' && !ids.has(id))
      errors.push({ path, message: `no node has id ${quoted(id)}` });
  };
  unknownNode(input.start, '/start');

  (Array.isArray(input.edges) ? input.edges : []).forEach((edge, i) => {
    if (!isRecord(edge)) return;
    const at = `/edges/${i}`;
    unknownNode(edge.from, `${at}/from`);
    unknownNode(edge.to, `${at}/to`);
    if (edge.if !== undefined && (edge.when !== undefined || edge.keywords !== undefined)) {
      errors.push({
        path: `${at}/if`,
        message: 'an `if` edge is decided by the server alone: it takes no `when` or `keywords`',
      });
    }
    if (isRecord(edge.if)) checkCondition(edge.if, `${at}/if`, variables, errors);
    if (edge.when !== undefined && edge.keywords === undefined)
      warnings.push({ path: `${at}/keywords`, message: NO_KEYWORDS });
  });
  global.forEach((edge, i) => {
    if (!isRecord(edge)) return;
    const at = `/global/${i}`;
    unknownNode(edge.to, `${at}/to`);
    if (edge.when === undefined && edge.keywords === undefined)
      errors.push({ path: at, message: 'a global edge needs `when` or `keywords` (else every turn would take it)' });
    else if (edge.keywords === undefined) warnings.push({ path: `${at}/keywords`, message: NO_KEYWORDS });
  });

  const graph = graphIssues({
    nodes: [...ids].map(([id, index]) => ({ id, index, type: (nodes[index] as Json).type as string })),
    edges: edges
      .filter((e) => ids.has(e.from as string) && ids.has(e.to as string))
      .map((e) => ({ from: e.from as string, to: e.to as string })),
    global: global.filter((e): e is Json => isRecord(e) && ids.has(e.to as string)).map((e) => e.to as string),
    start: typeof input.start === 'string' && ids.has(input.start) ? input.start : null,
  });
  return { errors: dedupe([...errors, ...graph.errors]), warnings: dedupe([...warnings, ...graph.warnings]) };
}

/** The declared variables (shape errors aside), and the errors of their names and enum values. */
function declaredVariables(raw: unknown, errors: PathwayIssue[]): Variables {
  const variables: Variables = new Map();
  if (!isRecord(raw)) return variables;
  for (const [name, variable] of Object.entries(raw)) {
    const at = `/variables/${pointerToken(name)}`;
    if (!VARIABLE_NAME.test(name))
      errors.push({
        path: at,
        message: 'a variable name is letters, digits and _ (at most 64), not starting with a digit',
      });
    else if ((RESERVED_NAMES as readonly string[]).includes(name))
      errors.push({ path: at, message: `${quoted(name)} is filled by the call itself: pick another name` });
    if (!isRecord(variable)) continue;
    variables.set(name, variable);
    if (variable.type === 'enum' && variable.values === undefined)
      errors.push({ path: `${at}/values`, message: 'is required for an enum' });
    if (variable.type !== 'enum' && variable.values !== undefined)
      errors.push({ path: `${at}/values`, message: 'only an enum has values' });
  }
  return variables;
}

/** What the checks of one node need: the declared variables, where errors go, the options. */
interface NodeContext extends ValidateOptions {
  variables: Variables;
  errors: PathwayIssue[];
}

function checkNode(node: unknown, at: string, context: NodeContext): void {
  const { variables, errors } = context;
  if (!isRecord(node)) {
    errors.push({ path: at, message: 'a node is an object' });
    return;
  }
  const type = node.type as NodeType;
  if (!NODE_TYPES.includes(type)) {
    errors.push({
      path: `${at}/type`,
      message:
        node.type === undefined
          ? 'is required'
          : `unknown node type ${quoted(node.type)}: one of ${NODE_TYPES.join(', ')}`,
    });
    errors.push(...shapeErrors(NodeIdentity, node, at));
    return;
  }
  errors.push(...shapeErrors(NODE_SCHEMAS[type], node, at));
  for (const field of TEMPLATE_FIELDS[type]) {
    const text = node[field];
    if (typeof text === 'string') checkTemplate(text, `${at}/${field}`, variables, errors);
  }
  if (type === 'webhook') {
    checkUrl(node.url, `${at}/url`, errors);
    checkAssignments(node.assign, `${at}/assign`, variables, errors);
  }
  if (type === 'conversation') {
    if (Array.isArray(node.extract)) {
      node.extract.forEach((name, i) => {
        if (typeof name === 'string' && !variables.has(name))
          errors.push({ path: `${at}/extract/${i}`, message: `names no declared variable: ${quoted(name)}` });
      });
    }
    if (Array.isArray(node.tools)) checkTools(node.tools, `${at}/tools`, context);
  }
}

/**
 * Inline tools as the custom tools will declare them: a real URL, headers that
 * can be sent, parameters that compile, declared variables to assign; names
 * unique in the node. (The address filter judges the URL when a call declares them.)
 */
function checkTools(tools: unknown[], at: string, { variables, errors, parametersProblem }: NodeContext): void {
  const seen = new Map<string, number>();
  tools.forEach((tool, i) => {
    const name = typeof tool === 'string' ? tool : isRecord(tool) ? tool.name : undefined;
    if (isRecord(tool)) {
      checkUrl(tool.url, `${at}/${i}/url`, errors);
      checkAssignments(tool.assign, `${at}/${i}/assign`, variables, errors);
      const headerNames = new Set<string>();
      for (const [header, value] of Object.entries(isRecord(tool.headers) ? tool.headers : {})) {
        const problem =
          headerProblem(header, value) ??
          (headerNames.has(header.toLowerCase()) ? 'is given twice (header names are case-insensitive)' : null);
        if (problem) errors.push({ path: `${at}/${i}/headers/${pointerToken(header)}`, message: problem });
        headerNames.add(header.toLowerCase());
      }
      const problem =
        isRecord(tool.parameters) && tool.parameters.type === 'object' ? parametersProblem?.(tool.parameters) : null;
      if (problem) errors.push({ path: `${at}/${i}/parameters`, message: problem });
    }
    if (typeof name !== 'string') return;
    const first = seen.get(name);
    if (first === undefined) seen.set(name, i);
    else
      errors.push({
        path: typeof tool === 'string' ? `${at}/${i}` : `${at}/${i}/name`,
        message: `tool ${quoted(name)} is already listed at ${at}/${first}`,
      });
  });
}

function checkUrl(url: unknown, path: string, errors: PathwayIssue[]): void {
  if (typeof url !== 'string' || url === '') return;
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:'))
    errors.push({ path, message: 'must be an absolute http or https URL' });
  else if (url.includes('{{')) errors.push({ path, message: 'is not a template: put variables in the body' });
}

function checkAssignments(assign: unknown, at: string, variables: Variables, errors: PathwayIssue[]): void {
  if (!isRecord(assign)) return;
  for (const [name, jsonPath] of Object.entries(assign)) {
    const path = `${at}/${pointerToken(name)}`;
    if (!variables.has(name)) errors.push({ path, message: `names no declared variable: ${quoted(name)}` });
    const problem = typeof jsonPath === 'string' ? parseJsonPath(jsonPath) : [];
    if (typeof problem === 'string') errors.push({ path, message: problem });
  }
}

function checkTemplate(text: string, path: string, variables: Variables, errors: PathwayIssue[]): void {
  for (const name of templateNames(text)) {
    if (isCallName(name) || variables.has(name)) continue;
    errors.push({
      path,
      message: `{{${name}}} names no declared variable (always known: contact.name, contact.phone, contact.fields.X, now)`,
    });
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A condition's variable is declared, and its value fits the operator and the variable's type. */
function checkCondition(condition: Json, at: string, variables: Variables, errors: PathwayIssue[]): void {
  const { var: name, op, value } = condition;
  if (typeof name !== 'string' || !(CONDITION_OPS as readonly unknown[]).includes(op)) return;
  const variable = variables.get(name);
  if (!variable) {
    errors.push({ path: `${at}/var`, message: `names no declared variable: ${quoted(name)}` });
    return;
  }
  const type = variable.type;
  if (op === 'exists') {
    if (value !== undefined) errors.push({ path: `${at}/value`, message: '`exists` takes no value' });
    return;
  }
  if (value === undefined)
    return void errors.push({ path: `${at}/value`, message: `is required for \`${String(op)}\`` });
  if (op === 'in') {
    if (!Array.isArray(value)) return void errors.push({ path: `${at}/value`, message: '`in` takes a list of values' });
    value.forEach((item, i) => checkValue(variable, item, `${at}/value/${i}`, errors));
    return;
  }
  if (Array.isArray(value))
    return void errors.push({
      path: `${at}/value`,
      message: `\`${String(op)}\` takes one value (\`in\` takes a list)`,
    });
  if ((op === 'gt' || op === 'lt') && type !== 'number' && type !== 'date') {
    return void errors.push({
      path: `${at}/op`,
      message: `\`${op}\` compares numbers or dates; ${quoted(name)} is of type ${String(type)}`,
    });
  }
  checkValue(variable, value, `${at}/value`, errors);
}

function checkValue(
  variable: { type?: unknown; values?: unknown },
  value: unknown,
  path: string,
  errors: PathwayIssue[],
): void {
  const type = variable.type;
  // A value of no JSON kind a condition takes, or a variable of no known type, has its shape error already.
  if (!(VARIABLE_TYPES as readonly unknown[]).includes(type) || (typeof value === 'object' && value !== null)) return;
  const fits =
    type === 'number'
      ? typeof value === 'number'
      : type === 'boolean'
        ? typeof value === 'boolean'
        : type === 'date'
          ? typeof value === 'string' && DATE.test(value)
          : type === 'enum'
            ? Array.isArray(variable.values) && variable.values.includes(value)
            : typeof value === 'string';
  if (fits) return;
  const wanted =
    type === 'date'
      ? 'a date (YYYY-MM-DD)'
      : type === 'enum'
        ? `one of ${(Array.isArray(variable.values) ? variable.values : []).map(quoted).join(', ')}`
        : type === 'number' || type === 'boolean'
          ? `a ${type}`
          : 'a string';
  errors.push({ path, message: `must be ${wanted}` });
}

function dedupe(issues: PathwayIssue[]): PathwayIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\n${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
