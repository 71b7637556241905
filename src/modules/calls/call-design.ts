// What a customer designs of a call beyond its prompt (DESIGN.md
// "Conversational pathways", "Custom tools and call variables"): the pathway
// it names, its custom HTTP tools and its variables. Checked and resolved
// when the call is assembled, and carried by the assembled call (sealed with
// the session) for the voice session to run. `check` does everything that
// needs no store, so a signed payload can be refused before its jti is spent.
import { AppError, invalidInput } from '../../http/errors.js';
import type { AssembledCall } from '../../providers/audio/interface.js';
import { VARIABLE_NAME } from '../custom-tools/declaration.js';
import type { CustomToolService, HttpTool } from '../custom-tools/service.js';
import { isLegacyPathway } from '../pathways/legacy.js';
import type { ConversationNode, PathwayDocument, PathwayIssue, PathwayNode } from '../pathways/schemas.js';
import { type PathwayService, type ResolvedPathway, invalidPathway } from '../pathways/service.js';
import { RESERVED_NAMES, type TemplateContext, fillTemplate } from '../pathways/templates.js';
import { VOICE_TOOLS } from '../voice/tools.js';

/** A call's own variables: `{{name}}` is filled from them. */
export type CallVariables = Record<string, string | number | boolean>;

export const MAX_CALL_VARIABLES = 100;
export const MAX_VARIABLE_TEXT = 2000;

/** Names the model has already (the voice agent's tools, the pathway's functions): no custom tool may take one. */
export const BUILT_IN_TOOL_NAMES: readonly string[] = [
  ...VOICE_TOOLS.map((t) => t.name),
  'choose_path',
  'set_variables',
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A payload's `variables`: at most 100, named as templates name them, each a string (up to 2,000 characters), a number or a boolean; else 400. */
export function parseCallVariables(input: unknown, path = 'variables'): CallVariables {
  if (!isObject(input)) throw invalidInput(`${path} must be an object of at most ${MAX_CALL_VARIABLES} variables`);
  const entries = Object.entries(input);
  if (entries.length > MAX_CALL_VARIABLES)
    throw invalidInput(`${path} has ${entries.length} variables: at most ${MAX_CALL_VARIABLES}`);
  for (const [name, value] of entries) {
    const at = `${path}[${JSON.stringify(name)}]`;
    if (!VARIABLE_NAME.test(name))
      throw invalidInput(`${at} is not a variable name: a letter or _, then up to 63 letters, digits or _`);
    if ((RESERVED_NAMES as readonly string[]).includes(name))
      throw invalidInput(`${at} is reserved: {{${name}}} is filled from the call itself`);
    const fits =
      typeof value === 'string'
        ? value.length <= MAX_VARIABLE_TEXT
        : typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!fits)
      throw invalidInput(`${at} must be a string of at most ${MAX_VARIABLE_TEXT} characters, a number or a boolean`);
  }
  return Object.fromEntries(entries) as CallVariables;
}

export interface CallDesignInput {
  /** The pathway as named: a document, `{ id }` (the owner's conversational-pathways store) or the old `{ name?, steps }`; anything else is 422. */
  pathway?: unknown;
  /** Custom tools as given (an array of declarations), and where they sit in the request, for messages (`tools`, `agent.tools`). */
  tools?: unknown;
  toolsPath?: string;
  variables?: CallVariables;
}

/** The pathway a call walks, as assembly uses it. */
export interface DesignedPathway {
  id: string | null;
  name: string;
  /** Valid; its conversation nodes' inline tools declared (header values sealed). */
  document: Record<string, unknown>;
  /** When it was the old list: that list, which the system prompt still spells out. */
  legacy: { name?: string; steps: string[] } | null;
}

export interface CallDesign {
  pathway: DesignedPathway | null;
  customTools: HttpTool[];
  /** The pathway validator's warnings, `pathway <path>: <message>`, for the call record. */
  warnings: string[];
}

/** What `check` found; `storedPathway`: the pathway is named by id, left to `resolve`. */
export interface CheckedDesign extends CallDesign {
  storedPathway: boolean;
}

export interface CallDesignDeps {
  pathways: Pick<PathwayService, 'resolveInline' | 'resolvePathway'>;
  customTools: Pick<CustomToolService, 'declare' | 'checkWebhookNode'>;
}

export class CallDesigns {
  constructor(private readonly deps: CallDesignDeps) {}

  /**
   * Everything that needs no store: the tools declared (400 naming the first
   * problem's path), an inline pathway or old list checked (422
   * invalid_pathway with every error), its inline tools declared and its
   * named tools found among the call's.
   */
  check(input: CallDesignInput): CheckedDesign {
    const customTools =
      input.tools === undefined
        ? []
        : this.deps.customTools.declare(input.tools, input.toolsPath ?? 'tools', BUILT_IN_TOOL_NAMES);
    if (input.pathway === undefined) return { pathway: null, customTools, warnings: [], storedPathway: false };
    const resolved = this.deps.pathways.resolveInline(input.pathway, { variables: input.variables });
    if (!resolved) return { pathway: null, customTools, warnings: [], storedPathway: true };
    // resolveInline refuses anything but an object.
    return { ...this.designed(resolved, input.pathway as Record<string, unknown>, customTools), storedPathway: false };
  }

  /** `check`, then a pathway named by id read from `userId`'s store (another user's: 404; invalid: 422). */
  async resolve(
    userId: string,
    input: CallDesignInput,
    checked: CheckedDesign = this.check(input),
  ): Promise<CallDesign> {
    const { storedPathway, ...design } = checked;
    if (!storedPathway) return design;
    const resolved = await this.deps.pathways.resolvePathway(userId, input.pathway, { variables: input.variables });
    return this.designed(resolved, input.pathway as Record<string, unknown>, checked.customTools);
  }

  private designed(resolved: ResolvedPathway, ref: Record<string, unknown>, customTools: HttpTool[]): CallDesign {
    const legacy = isLegacyPathway(ref)
      ? { ...(typeof ref.name === 'string' && ref.name ? { name: ref.name } : {}), steps: ref.steps as string[] }
      : null;
    return {
      pathway: {
        id: resolved.id,
        name: resolved.document.name,
        document: this.withDeclaredTools(resolved.document, customTools),
        legacy,
      },
      customTools,
      warnings: resolved.warnings.map((w) => `pathway ${w.path || '(the document)'}: ${w.message}`),
    };
  }

  /**
   * The document with each conversation node's inline tools declared as the
   * call's are (the webhook address filter, header values sealed: the
   * assembled call never holds one in clear), and each tool it names by
   * string one of the call's (known only now: the validator cannot tell).
   */
  private withDeclaredTools(document: PathwayDocument, customTools: HttpTool[]): Record<string, unknown> {
    const callTools = new Set([...BUILT_IN_TOOL_NAMES, ...customTools.map((t) => t.name)]);
    const unknownNames: PathwayIssue[] = document.nodes.flatMap((node, i) =>
      toolsOf(node).flatMap((tool, j) =>
        typeof tool === 'string' && !callTools.has(tool)
          ? [
              {
                path: `/nodes/${i}/tools/${j}`,
                message: `names no tool of this call: "${tool}" (its tools: ${[...callTools].join(', ')})`,
              },
            ]
          : [],
      ),
    );
    if (unknownNames.length) throw invalidPathway(unknownNames);
    // Webhook nodes go through the webhook address filter as the call's tools do.
    document.nodes.forEach((node, i) => {
      if (node.type === 'webhook') this.deps.customTools.checkWebhookNode(node.url, `pathway.nodes[${i}].url`);
    });
    const nodes = document.nodes.map((node, i) => {
      const tools = toolsOf(node);
      if (!tools.some((tool) => typeof tool !== 'string')) return node;
      return {
        ...node,
        tools: tools.map((tool, j) =>
          typeof tool === 'string' ? tool : this.declareOne(tool, `pathway.nodes[${i}].tools`, j, callTools),
        ),
      };
    });
    return { ...document, nodes };
  }

  /** One inline tool, its problems named at its own index in the node's list. */
  private declareOne(tool: unknown, listPath: string, index: number, taken: Iterable<string>): HttpTool {
    try {
      return this.deps.customTools.declare([tool], listPath, taken)[0]!;
    } catch (err) {
      if (err instanceof AppError) err.message = err.message.replace(`${listPath}[0]`, `${listPath}[${index}]`);
      throw err;
    }
  }
}

/** A conversation node's tools (names or inline declarations); none for other nodes. */
const toolsOf = (node: PathwayNode): NonNullable<ConversationNode['tools']> =>
  node.type === 'conversation' ? ((node as ConversationNode).tools ?? []) : [];

/** Fills the `{{name}}` templates of one call's texts, remembering the names that had no value. */
export class CallTemplates {
  private readonly unknown = new Set<string>();

  constructor(private readonly context: TemplateContext) {}

  fill(text: string): string;
  fill(text: string | undefined): string | undefined;
  fill(text: string | undefined): string | undefined {
    if (text === undefined) return undefined;
    const filled = fillTemplate(text, this.context);
    for (const name of filled.unknown) this.unknown.add(name);
    return filled.text;
  }

  /** One line per name filled with nothing. */
  warnings(): string[] {
    return [...this.unknown].map((name) => `{{${name}}} has no value: filled with nothing`);
  }
}

/** The system prompt's part about the pathway: the old list spelled out as it always was, or one sentence naming a document. */
export function pathwayPrompt(
  pathway: DesignedPathway | null,
  templates: CallTemplates,
  options: { named: boolean },
): string | null {
  if (!pathway) return null;
  // External audio servers read the steps here; the built-in voice session walks the list's linear document and drops this (withoutStepsListing).
  if (pathway.legacy) {
    const name = options.named && pathway.legacy.name ? ` ("${pathway.legacy.name}")` : '';
    return `Follow this conversation pathway${name}, step by step:\n${pathway.legacy.steps.map((s, i) => `${i + 1}. ${templates.fill(s)}`).join('\n')}`;
  }
  // The voice session walks the document itself and gives the model each step as it comes.
  return `This call follows the conversation pathway "${pathway.name}".`;
}

/**
 * The system prompt of a call whose voice session walks the old list itself
 * (it gives the model each step as it comes): pathwayPrompt's listing taken
 * out, the paragraph from its "Follow this conversation pathway" line to the
 * next blank line. External audio servers keep the listing.
 */
export function withoutStepsListing(systemPrompt: string): string {
  const paragraphs = systemPrompt.split('\n\n');
  const kept = paragraphs.filter(
    (p) => !/^Follow this conversation pathway(?: \("[^\n]*"\))?, step by step:\n1\. /.test(p),
  );
  return kept.join('\n\n');
}

/** The assembled call's fields of a design (absent when empty). */
export function designedCallFields(
  design: CallDesign,
  extras: { variables?: CallVariables; contactFields?: Record<string, string>; warnings: string[] },
): Pick<AssembledCall, 'pathway' | 'variables' | 'customTools' | 'contactFields' | 'warnings'> {
  const warnings = [...extras.warnings, ...design.warnings];
  return {
    ...(design.pathway
      ? { pathway: { id: design.pathway.id, name: design.pathway.name, document: design.pathway.document } }
      : {}),
    ...(extras.variables && Object.keys(extras.variables).length ? { variables: extras.variables } : {}),
    ...(design.customTools.length
      ? { customTools: design.customTools as unknown as Array<Record<string, unknown>> }
      : {}),
    ...(extras.contactFields && Object.keys(extras.contactFields).length
      ? { contactFields: extras.contactFields }
      : {}),
    ...(warnings.length ? { warnings } : {}),
  };
}
