// The pathway walker (DESIGN.md "Conversational pathways", "Running"): one
// node of a valid document is current; entering a node yields what the
// session must do (speak and converse, call a webhook, send digits, text,
// transfer, end); non-speaking nodes lead on by themselves until a node that
// talks or finishes the call. The model moves it with choose_path and fills
// variables with set_variables (model-view.ts); the sandbox walk does both
// from the caller's words (sandbox-walk.ts). Pure: no I/O, an injected clock.
import type { Clock } from '../../lib/clock.js';
import type { ToolSpec } from '../../providers/language-model/interface.js';
import { parseJsonPath, readJsonPath } from '../custom-tools/json-path.js';
import { conditionHolds } from './conditions.js';
import { type WalkEdge, isUnconditioned, walkEdges } from './edges.js';
import { type PathwayView, choosePathTool, describeInstructions, setVariablesTool } from './model-view.js';
import type { PathwayDocument, PathwayNode } from './schemas.js';
import type { PathEntry, PathwaySnapshot, ToolApplication, WalkStep, WebhookResult } from './walk-step.js';
import { type TemplateContext, fillTemplate } from './templates.js';
import { type VariableDeclaration, type VariableValue, hasValue, toVariableValue } from './values.js';

/** The most edges one call may take; past it the call ends failed, outcome `pathway_error`. */
export const MAX_MOVES = 100;

export interface PathwayWalkerOptions {
  /** A document the validator accepted (PathwayService.resolvePathway / resolveInline). */
  document: PathwayDocument;
  /** The store object's id; null or absent for an inline pathway. */
  id?: string | null;
  /** The call's variables (a call payload's `variables`), before what the call collects. */
  variables?: Readonly<Record<string, unknown>>;
  contact?: TemplateContext['contact'];
  clock: Clock;
  /** Call time zero: a path entry's `atMs` counts from it. Default: the clock's now when the walker is made. */
  callStartMs?: number;
  maxMoves?: number;
}

/** idle: not started; conversation: at a conversation node; webhook: waiting for completeWebhook; finished: transfer, end or failed. */
export type WalkerState = PathwayView['state'];

export type { WalkEdge } from './edges.js';
export type {
  Move,
  NodeEffect,
  PathEntry,
  PathwaySnapshot,
  ToolApplication,
  WalkStep,
  WebhookResult,
} from './walk-step.js';

const emptyStep = (): WalkStep => ({ moves: [], effects: [], set: {}, warnings: [] });
const refused = (error: string): ToolApplication => ({ result: { error }, step: emptyStep() });

export class PathwayWalker implements PathwayView {
  readonly document: PathwayDocument;
  readonly declared: Readonly<Record<string, VariableDeclaration>>;
  private readonly nodes = new Map<string, PathwayNode>();
  private readonly edgesFrom: Map<string, WalkEdge[]>;
  private readonly globalEdges: WalkEdge[];
  private readonly values: Record<string, unknown>;
  private readonly path: PathEntry[] = [];
  private readonly allWarnings = new Set<string>();
  readonly clock: Clock;
  private readonly callStartMs: number;
  private readonly maxMoves: number;
  private currentId: string;
  private moveCount = 0;
  private walkState: WalkerState = 'idle';
  private failure: string | null = null;
  /** The `say` spoken on arriving at the current conversation node, as filled then (the model is told it was said). */
  private saidOnArrival: string | undefined;

  constructor(private readonly options: PathwayWalkerOptions) {
    this.document = options.document;
    this.declared = options.document.variables ?? {};
    this.clock = options.clock;
    this.callStartMs = options.callStartMs ?? options.clock.now();
    this.maxMoves = options.maxMoves ?? MAX_MOVES;
    this.values = { ...(options.variables ?? {}) };
    this.currentId = options.document.start;
    for (const node of options.document.nodes) if (!this.nodes.has(node.id)) this.nodes.set(node.id, node);
    const edges = walkEdges(options.document);
    this.edgesFrom = edges.from;
    this.globalEdges = edges.global;
  }

  get state(): WalkerState {
    return this.walkState;
  }
  get current(): PathwayNode {
    return this.nodes.get(this.currentId)!;
  }
  /** Edges taken so far. */
  get moves(): number {
    return this.moveCount;
  }
  /** Why the walk failed (the call's outcome is then `pathway_error`), or null. */
  get failed(): string | null {
    return this.failure;
  }
  get variables(): Readonly<Record<string, unknown>> {
    return this.values;
  }
  /** Every warning so far, each once (for the call record's warnings). */
  get warnings(): string[] {
    return [...this.allWarnings];
  }

  /** Enters the start node. Once, before anything else. */
  start(): WalkStep {
    if (this.walkState !== 'idle') throw new Error('the pathway walk has already started');
    const step = emptyStep();
    this.run(this.arrive(this.document.start, undefined, step), step);
    return step;
  }

  /** `{{name}}`s filled from the variables so far, the contact and the clock; names with no value become warnings. */
  fill(text: string, options: { escape?: 'json' } = {}, step?: WalkStep): string {
    const filled = fillTemplate(
      text,
      { variables: this.values, contact: this.options.contact ?? null, now: this.clock.now() },
      options,
    );
    for (const name of filled.unknown) this.warn(`{{${name}}} has no value: filled with nothing`, step);
    return filled.text;
  }

  /** Edges a caller's turn may take at the current conversation node: global ones first, then its own but `if` ones (the server decides those). */
  choosableEdges(): WalkEdge[] {
    if (this.walkState !== 'conversation') return [];
    return [...this.globalEdges, ...this.localEdges().filter((e) => e.if === undefined)];
  }

  /** The current node's `extract` variables that have no value yet, in its order. */
  missingVariables(): string[] {
    return this.extractHere().filter((name) => !hasValue(this.values[name]));
  }

  /** The node's own `extract` list (declared names; a valid document names no other). */
  extractHere(): string[] {
    const node = this.current;
    return this.walkState === 'conversation' && node.type === 'conversation'
      ? (node.extract ?? []).filter((n) => Object.hasOwn(this.declared, n))
      : [];
  }

  /** What the model is told about the current node, besides the agent's instructions. */
  nodeInstructions(): string {
    return describeInstructions(this, this.saidOnArrival);
  }

  /** The pathway's tools at the current node: choose_path when there are paths to choose, set_variables when it collects variables. */
  tools(): ToolSpec[] {
    const tools: ToolSpec[] = [];
    const edges = this.choosableEdges();
    if (edges.length) tools.push(choosePathTool(edges));
    const extract = this.extractHere();
    if (extract.length) tools.push(setVariablesTool(this, extract));
    return tools;
  }

  /** The current conversation node's own `tools` (names, or inline tools declared at assembly), offered beside the call's. */
  nodeTools(): NonNullable<Extract<PathwayNode, { type: 'conversation' }>['tools']> {
    const node = this.current;
    return this.walkState === 'conversation' && node.type === 'conversation' ? (node.tools ?? []) : [];
  }

  /** The model's choose_path: `{ to: "<node id>" }`, one of the choosable edges' targets (the first edge to it is taken). */
  applyChoosePath(args: unknown): ToolApplication {
    if (this.walkState !== 'conversation') return refused(this.notConversing());
    const edges = this.choosableEdges();
    const targets = [...new Set(edges.map((e) => e.to))];
    const to = asObject(args)?.to;
    const edge = typeof to === 'string' ? edges.find((e) => e.to === to) : undefined;
    if (!edge)
      return refused(
        `choose_path: ${JSON.stringify(to ?? null)} is not a path from here; \`to\` is one of ${targets.map((t) => JSON.stringify(t)).join(', ') || '(none)'}`,
      );
    const step = this.take(edge);
    return {
      result: this.failure
        ? { error: `the pathway cannot go on: ${this.failure}` }
        : { ok: true, node: this.currentId },
      step,
    };
  }

  /** The model's set_variables: values of the current node's `extract` variables, each of its type; all or nothing. */
  applySetVariables(args: unknown): ToolApplication {
    if (this.walkState !== 'conversation') return refused(this.notConversing());
    const input = asObject(args);
    const allowed = this.extractHere();
    if (!input || !Object.keys(input).length)
      return refused(`set_variables: give an object of at least one of ${allowed.join(', ')}`);
    const problems: string[] = [];
    const values: Record<string, VariableValue> = {};
    for (const [name, raw] of Object.entries(input)) {
      if (!allowed.includes(name)) {
        problems.push(`${name} is not collected at this step (it collects ${allowed.join(', ') || 'nothing'})`);
        continue;
      }
      const checked = toVariableValue(this.declared[name]!, raw);
      if ('problem' in checked) problems.push(`${name} ${checked.problem}`);
      else values[name] = checked.value;
    }
    if (problems.length) return refused(`set_variables: ${problems.join('; ')}; nothing was set`);
    const step = this.collect(values);
    return {
      result: this.failure
        ? { error: `the pathway cannot go on: ${this.failure}` }
        : { ok: true, set: values, node: this.currentId },
      step,
    };
  }

  /** The session's report of the current webhook node's request: `assign` picks variables from a JSON answer, then the walk leads on. */
  completeWebhook(outcome: WebhookResult): WalkStep {
    const node = this.current;
    if (this.walkState !== 'webhook' || node.type !== 'webhook')
      throw new Error('no webhook node is waiting for its answer');
    const step = emptyStep();
    if (outcome.ok) {
      for (const [name, jsonPath] of Object.entries(node.assign ?? {})) {
        const steps = parseJsonPath(jsonPath);
        const found = typeof steps === 'string' ? undefined : readJsonPath(outcome.result, steps);
        const variable = this.declared[name];
        if (found === undefined || found === null || !variable) continue;
        const checked = toVariableValue(variable, found);
        if ('problem' in checked)
          this.warn(`webhook node ${JSON.stringify(node.id)}: ${name} ${checked.problem}; not assigned`, step);
        else step.set[name] = this.values[name] = checked.value;
      }
    }
    const next = this.finishedEdge(node.id);
    // A step that does not speak cannot wait for anything: with no way on, the walk fails.
    if (!next) this.fail(`webhook node ${JSON.stringify(node.id)} has no edge to lead on by`, step);
    else this.run(next, step);
    return step;
  }

  /** Takes `edge` (one of choosableEdges) from the current conversation node. */
  take(edge: WalkEdge): WalkStep {
    const step = emptyStep();
    this.run(edge, step);
    return step;
  }

  /**
   * Sets variables at the current conversation node, then settles it: the
   * first `if` edge that holds is taken; else, once every `extract` variable
   * has a value (the node has finished), its unconditioned edge.
   */
  collect(values: Record<string, VariableValue>): WalkStep {
    const step = emptyStep();
    Object.assign(this.values, values);
    Object.assign(step.set, values);
    if (this.walkState !== 'conversation') return step;
    const finished = this.extractHere().length > 0 && this.missingVariables().length === 0;
    this.run(this.holdingIfEdge(this.currentId) ?? (finished ? this.fallbackEdge(this.currentId) : null), step);
    return step;
  }

  /** The unconditioned edge of the current node (the fallback), if any. */
  fallbackEdge(nodeId = this.currentId): WalkEdge | null {
    return this.edgesOf(nodeId).find(isUnconditioned) ?? null;
  }

  /** The first `if` edge of a node whose condition holds now. */
  holdingIfEdge(nodeId = this.currentId): WalkEdge | null {
    return (
      this.edgesOf(nodeId).find((e) => e.if !== undefined && conditionHolds(e.if, this.values, this.declared)) ?? null
    );
  }

  snapshot(): PathwaySnapshot {
    const id = this.options.id;
    return {
      ...(id ? { id } : {}),
      name: this.document.name,
      path: this.path.map((e) => ({ ...e })),
      variables: { ...this.values },
    };
  }

  private localEdges(): WalkEdge[] {
    return this.edgesOf(this.currentId);
  }

  private edgesOf(nodeId: string): WalkEdge[] {
    return this.edgesFrom.get(nodeId) ?? [];
  }

  /** A node that has done its work (webhook, digits, sms) leads on: by an `if` edge that holds, else its unconditioned edge. */
  private finishedEdge(nodeId: string): WalkEdge | null {
    return this.holdingIfEdge(nodeId) ?? this.fallbackEdge(nodeId);
  }

  /** Follows `edge` and whatever edges the nodes it reaches take by themselves, within the move limit. */
  private run(edge: WalkEdge | null, step: WalkStep): void {
    while (edge && this.walkState !== 'finished') {
      if (this.moveCount >= this.maxMoves)
        return this.fail(`the pathway took ${this.maxMoves} edges, the most one call may take`, step);
      this.moveCount += 1;
      edge = this.arrive(edge.to, edge, step);
    }
  }

  /** Makes `id` current and does what its type does; returns the edge it leads on by at once, if any. */
  private arrive(id: string, edge: WalkEdge | undefined, step: WalkStep): WalkEdge | null {
    const from = this.path.length ? this.currentId : undefined;
    const entry: PathEntry = {
      node: id,
      atMs: this.clock.now() - this.callStartMs,
      ...(edge ? { edge: edge.ref } : {}),
    };
    this.path.push(entry);
    step.moves.push({ ...entry, ...(from !== undefined ? { from } : {}) });
    this.currentId = id;
    this.saidOnArrival = undefined;
    const node = this.nodes.get(id);
    if (!node) {
      this.fail(`no node has id ${JSON.stringify(id)}`, step);
      return null;
    }
    const say = (text: string | undefined) => (text === undefined ? {} : { say: this.fill(text, {}, step) });
    switch (node.type) {
      case 'conversation': {
        // A condition that already holds (a variable the call brought) passes the node by.
        const passing = this.holdingIfEdge(id);
        if (passing) return passing;
        this.walkState = 'conversation';
        const effect = { kind: 'conversation' as const, node: id, ...say(node.say) };
        this.saidOnArrival = effect.say;
        step.effects.push(effect);
        return null;
      }
      case 'webhook':
        this.walkState = 'webhook';
        step.effects.push({
          kind: 'webhook',
          node: id,
          url: node.url,
          method: node.method,
          ...(node.body !== undefined ? { body: this.fill(node.body, { escape: 'json' }, step) } : {}),
          assign: { ...(node.assign ?? {}) },
        });
        return null;
      case 'digits':
      case 'sms': {
        step.effects.push(
          node.type === 'digits'
            ? { kind: 'digits', node: id, send: node.send }
            : { kind: 'sms', node: id, text: this.fill(node.text, {}, step) },
        );
        const next = this.finishedEdge(id);
        if (!next) this.fail(`${node.type} node ${JSON.stringify(id)} has no edge to lead on by`, step);
        return next;
      }
      case 'transfer':
        this.walkState = 'finished';
        step.effects.push({
          kind: 'transfer',
          node: id,
          ...(node.humanAgentId !== undefined ? { humanAgentId: node.humanAgentId } : {}),
          ...say(node.say),
        });
        return null;
      case 'end':
        this.walkState = 'finished';
        step.effects.push({ kind: 'end', node: id, ...say(node.say) });
        return null;
    }
  }

  private fail(message: string, step: WalkStep): void {
    this.walkState = 'finished';
    this.failure = message;
    step.effects.push({ kind: 'failed', node: this.currentId, outcome: 'pathway_error', message });
  }

  private warn(message: string, step?: WalkStep): void {
    if (this.allWarnings.has(message)) return;
    this.allWarnings.add(message);
    step?.warnings.push(message);
  }

  private notConversing(): string {
    if (this.walkState === 'finished') return 'the pathway has ended';
    if (this.walkState === 'webhook') return `the step ${JSON.stringify(this.currentId)} is waiting for its request`;
    return 'the pathway has not started';
  }
}

/** Tool arguments as an object: parsed when given as the model's JSON text. */
function asObject(args: unknown): Record<string, unknown> | null {
  let value = args;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}
