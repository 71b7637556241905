// Conversational pathways (DESIGN.md "Conversational pathways"): the document
// typed from the server's schema, a builder that keeps variable names and
// node ids straight at compile time, the validate route, and the records of
// the `conversational-pathways` store (encrypted here, like every store
// record; the service opens them with the store's key when a call names one
// by `{ id }`).
import type { Body } from './api-types.js';
import { WorkspaceApiError, type HttpCore } from './http.js';
import type { Version } from './data.js';
import type { StoreClient, StoreRecord } from './store.js';

/** A pathway document `{ name, start, variables?, nodes, edges, global? }`, as POST /api/pathways/validate takes it. */
export type PathwayDocument = Body<'/api/pathways/validate', 'post'>;
export type PathwayNode = PathwayDocument['nodes'][number];
export type PathwayNodeType = PathwayNode['type'];
/** One node type's fields: `PathwayNodeOf<'webhook'>`. */
export type PathwayNodeOf<T extends PathwayNodeType> = Extract<PathwayNode, { type: T }>;
export type PathwayEdge = PathwayDocument['edges'][number];
export type GlobalEdge = NonNullable<PathwayDocument['global']>[number];
export type PathwayVariable = NonNullable<PathwayDocument['variables']>[string];
export type PathwayCondition = NonNullable<PathwayEdge['if']>;
/** An inline custom HTTP tool of a conversation node (DESIGN.md "Custom tools and call variables"). */
export type HttpTool = Exclude<NonNullable<PathwayNodeOf<'conversation'>['tools']>[number], string>;

/** One error or warning of the validator: `path` is a JSON pointer into the document (`/nodes/3/id`). */
export interface PathwayIssue {
  path: string;
  message: string;
}

/** What POST /api/pathways/validate said: valid with warnings, or not valid with every error. */
export type PathwayCheck = { valid: true; warnings: PathwayIssue[] } | { valid: false; errors: PathwayIssue[] };

/** A pathway the service refused (422 invalid_pathway), with every error and its path. */
export class PathwayInvalidError extends Error {
  constructor(readonly errors: PathwayIssue[]) {
    super(
      `the pathway is not valid: ${errors
        .slice(0, 5)
        .map((e) => `${e.path || '/'} ${e.message}`)
        .join('; ')}${errors.length > 5 ? ` (and ${errors.length - 5} more)` : ''}`,
    );
    this.name = 'PathwayInvalidError';
  }
}

/** Types a literal document without changing it: `definePathway({ name, start, nodes, edges })`. */
export const definePathway = (document: PathwayDocument): PathwayDocument => document;

/** How a call names a stored pathway: `{ id }` (the call-session payload's `pathway`, a web call's `pathwayId`). */
export const pathwayRef = (record: string | { id: string }): { id: string } => ({
  id: typeof record === 'string' ? record : record.id,
});

type NodeFields<T extends PathwayNodeType> = Omit<PathwayNodeOf<T>, 'id' | 'type'>;
/** A conversation node whose `extract` names declared variables only. */
type ConversationFields<V extends string> = Omit<NodeFields<'conversation'>, 'extract'> & { extract?: V[] };
type WebhookFields<V extends string> = Omit<NodeFields<'webhook'>, 'assign'> & { assign?: Partial<Record<V, string>> };
type EdgeFields<V extends string> = Omit<PathwayEdge, 'from' | 'to' | 'if'> & {
  if?: Omit<PathwayCondition, 'var'> & { var: V };
};

/**
 * Builds a pathway document step by step. Declare variables and nodes first:
 * `extract`, `assign` and `if` then accept declared variable names only, and
 * edges the ids of nodes already added (a typo is a compile error). The first
 * node is the start unless `start()` names another. `build()` checks what it
 * can alone (unique ids, known edge ends); the service's validate route checks
 * the rest (templates, reachability).
 */
export class PathwayBuilder<V extends string = never, N extends string = never> {
  private readonly doc: {
    name: string;
    description?: string;
    start?: string;
    variables: Record<string, PathwayVariable>;
    nodes: PathwayNode[];
    edges: PathwayEdge[];
    global: GlobalEdge[];
  };

  constructor(name: string, options: { description?: string } = {}) {
    this.doc = { name, ...options, variables: {}, nodes: [], edges: [], global: [] };
  }

  variable<K extends string>(name: K, variable: PathwayVariable): PathwayBuilder<V | K, N> {
    this.doc.variables[name] = variable;
    return this as unknown as PathwayBuilder<V | K, N>;
  }

  conversation<I extends string>(id: I, fields: ConversationFields<V> = {}): PathwayBuilder<V, N | I> {
    return this.node(id, 'conversation', fields);
  }

  webhook<I extends string>(id: I, fields: WebhookFields<V>): PathwayBuilder<V, N | I> {
    return this.node(id, 'webhook', fields);
  }

  transfer<I extends string>(id: I, fields: NodeFields<'transfer'> = {}): PathwayBuilder<V, N | I> {
    return this.node(id, 'transfer', fields);
  }

  digits<I extends string>(id: I, fields: NodeFields<'digits'>): PathwayBuilder<V, N | I> {
    return this.node(id, 'digits', fields);
  }

  sms<I extends string>(id: I, fields: NodeFields<'sms'>): PathwayBuilder<V, N | I> {
    return this.node(id, 'sms', fields);
  }

  end<I extends string>(id: I, fields: NodeFields<'end'> = {}): PathwayBuilder<V, N | I> {
    return this.node(id, 'end', fields);
  }

  /** An edge: `when` (the model decides), `keywords` (the sandbox engine), `if` (the server, on variables), or none (when the node has finished, or the fallback). */
  edge(from: N, to: N, fields: EdgeFields<V> = {}): this {
    this.doc.edges.push({ from, to, ...fields } as PathwayEdge);
    return this;
  }

  /** An edge that may be taken from any conversation node (a caller asking for a person, an opt-out). */
  global(to: N, fields: Omit<GlobalEdge, 'to'> = {}): this {
    this.doc.global.push({ to, ...fields });
    return this;
  }

  start(id: N): this {
    this.doc.start = id;
    return this;
  }

  build(): PathwayDocument {
    const ids = new Set<string>();
    for (const node of this.doc.nodes) {
      if (ids.has(node.id)) throw new Error(`two nodes have the id ${JSON.stringify(node.id)}`);
      ids.add(node.id);
    }
    const start = this.doc.start ?? this.doc.nodes[0]?.id;
    if (start === undefined) throw new Error('a pathway needs at least one node');
    const ends = [...this.doc.edges.flatMap((edge) => [edge.from, edge.to]), ...this.doc.global.map((edge) => edge.to)];
    for (const end of ends) if (!ids.has(end)) throw new Error(`an edge names no node: ${JSON.stringify(end)}`);
    const document: PathwayDocument = {
      name: this.doc.name,
      ...(this.doc.description !== undefined ? { description: this.doc.description } : {}),
      start,
      ...(Object.keys(this.doc.variables).length ? { variables: structuredClone(this.doc.variables) } : {}),
      nodes: structuredClone(this.doc.nodes),
      edges: structuredClone(this.doc.edges),
      ...(this.doc.global.length ? { global: structuredClone(this.doc.global) } : {}),
    };
    return document;
  }

  private node<I extends string>(id: I, type: PathwayNodeType, fields: object): PathwayBuilder<V, N | I> {
    this.doc.nodes.push({ id, type, ...fields } as PathwayNode);
    return this as unknown as PathwayBuilder<V, N | I>;
  }
}

/** Starts a builder: `pathway('Order status').variable(...).conversation(...)...build()`. */
export const pathway = (name: string, options: { description?: string } = {}) => new PathwayBuilder(name, options);

/**
 * client.pathways: validate a document, and keep pathways in the account's
 * `conversational-pathways` store. create and update validate first and store
 * only a valid document (PathwayInvalidError otherwise).
 */
export class PathwaysApi {
  constructor(
    private readonly http: HttpCore,
    /** The signed-in account's store (looked up on each use: a new token is another account). */
    private readonly pathwayStore: () => StoreClient<PathwayDocument>,
  ) {}

  private get store(): StoreClient<PathwayDocument> {
    return this.pathwayStore();
  }

  /** POST /api/pathways/validate: `{ valid: true, warnings }` or `{ valid: false, errors }` (the 422's); other failures throw. */
  async validate(document: PathwayDocument): Promise<PathwayCheck> {
    try {
      const answer = await this.http.request('post', '/api/pathways/validate', { body: document });
      return { valid: true, warnings: answer.warnings };
    } catch (error) {
      const errors = (error as WorkspaceApiError).body as { errors?: PathwayIssue[] } | undefined;
      if (error instanceof WorkspaceApiError && error.code === 'invalid_pathway' && Array.isArray(errors?.errors))
        return { valid: false, errors: errors.errors };
      throw error;
    }
  }

  /** Validates, then stores the document encrypted in the store; name it on a call with pathwayRef(record). */
  async create(document: PathwayDocument): Promise<StoreRecord<PathwayDocument> & { warnings: PathwayIssue[] }> {
    const warnings = await this.mustBeValid(document);
    return { ...(await this.store.create(document)), warnings };
  }

  /** Validates, then replaces a stored pathway (with ifMatch only if it is still at that version). */
  async update(
    id: string,
    document: PathwayDocument,
    options: { ifMatch?: Version } = {},
  ): Promise<StoreRecord<PathwayDocument> & { warnings: PathwayIssue[] }> {
    const warnings = await this.mustBeValid(document);
    return { ...(await this.store.update(id, document, options)), warnings };
  }

  /** The stored pathways, oldest first, decrypted. */
  list(page: { limit?: number; after?: string } = {}): Promise<StoreRecord<PathwayDocument>[]> {
    return this.store.list(page);
  }

  get(id: string): Promise<StoreRecord<PathwayDocument>> {
    return this.store.get(id);
  }

  delete(id: string): Promise<void> {
    return this.store.delete(id);
  }

  private async mustBeValid(document: PathwayDocument): Promise<PathwayIssue[]> {
    const check = await this.validate(document);
    if (!check.valid) throw new PathwayInvalidError(check.errors);
    return check.warnings;
  }
}
