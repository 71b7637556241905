// The agent's turn logic of one call, without audio (DESIGN.md "Conversational
// pathways", "Custom tools and call variables"): the pathway walk, the tools
// the model is offered (the built-in ones, choose_path and set_variables, the
// customer's HTTP tools), what a caller's turn does before the model is asked
// (the sandbox walk, a keypad edge, a custom tool's keywords), and the node
// effects carried out through the call's own hands (PathwayEffects). The
// voice session speaks what it answers; a text run (agent tests) can drive
// the same object with caller text and a model.
import { type TimerClock, sleep } from '../../lib/clock.js';
import type { ToolSpec } from '../../providers/language-model/interface.js';
import { keywordsOccur, extractValue } from '../pathways/extract.js';
import { keywordEdgeFor, sandboxTurn } from '../pathways/sandbox-walk.js';
import type { VariableDeclaration } from '../pathways/values.js';
import { toVariableValue } from '../pathways/values.js';
import { CHOOSE_PATH, SET_VARIABLES } from '../pathways/model-view.js';
import type { Move, NodeEffect, PathwaySnapshot, PathwayWalker, WalkStep, WebhookResult } from '../pathways/walker.js';
import type { ReplyTools, ToolCallRecord, ToolRegistry, ToolSettled } from './tools.js';

/** A custom HTTP tool as the call holds it (custom-tools' HttpTool; header values sealed): what this file reads of it. */
export interface CallCustomTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  speak?: string;
  keywords?: string[];
}

/** How the call uses its custom tools (CustomToolService.invoke, bound to the call's owner and session). */
export interface CustomToolInvoker {
  invoke(
    tool: CallCustomTool,
    args: unknown,
    variables: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ ok: true; result: unknown; assigned: Record<string, unknown> } | { ok: false; error: string }>;
}

/** What the walk's nodes do outside the conversation, carried out by the call (the runner binds them). */
export interface PathwayEffects {
  /** A webhook node's signed request (CustomToolService.callWebhook). */
  webhook(
    effect: Extract<NodeEffect, { kind: 'webhook' }>,
    variables: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<WebhookResult>;
  /** DTMF digits to the other party (`w`: half a second's pause). */
  digits(send: string): Promise<void>;
  /** A text to the contact, charged as any SMS. */
  sms(text: string): Promise<void>;
  /** Arranges the transfer as transfer_to_human does (carried out once the last line has played). */
  transfer(humanAgentId: string | undefined): Promise<{ ok: boolean; message?: string }>;
  /** Hangs up once the last line has played. */
  end(): void;
  /** The walk cannot go on: the call ends failed, outcome `pathway_error`, once the last line has played. */
  failed(message: string): void;
  /** One move (a `call_node` event). */
  move(move: Move): void;
  /** A warning for the record (a `{{name}}` filled with nothing, an SMS not sent). */
  warn(message: string): void;
}

export interface CallAgentOptions {
  /** The agent's instructions (the assembled call's system prompt). */
  systemPrompt: string;
  walker?: PathwayWalker | null;
  /** The built-in tools of the call (those whose services it has, and end_call). */
  builtins: ToolRegistry;
  customTools?: CallCustomTool[];
  invoker?: CustomToolInvoker | null;
  /** The model is the sandbox dialogue engine: the caller's words walk the pathway and trigger custom tools by keywords. */
  sandbox: boolean;
  clock: TimerClock;
  effects: PathwayEffects;
  /** The call's variables (payload, contact) when there is no pathway to keep them. */
  variables?: Record<string, unknown>;
  /** Tool calls made outside a model's reply (a sandbox keyword call). */
  onToolCall?(call: ToolCallRecord): void;
  /** Call time zero, for tool calls' atMs. */
  callStartMs: number;
  /**
   * The call's lifetime: what the walk's effects and custom tools run under.
   * A barge-in does not take back a step once started (a webhook's answer
   * moves the walk; a customer's tool may act), so the reply's signal is not
   * theirs. Absent: the signal each call is given.
   */
  signal?: AbortSignal;
}

/** What a caller's turn asks of the call before (or instead of) the model. */
export interface TurnPlan {
  /** Lines to say, in order (a step's `say`, a question for a missing variable, a tool's line). */
  say: string[];
  /** Ask the model for the answer after them. */
  askModel: boolean;
}

/** Said when a walk fails before the call hangs up (outcome `pathway_error`). */
export const PATHWAY_FAILED_LINE = "I'm sorry, I can't continue this call right now. Goodbye.";
/** Said when a pathway's transfer cannot be arranged (the call then ends). */
export const TRANSFER_FAILED_LINE = "I'm sorry, nobody is available to take your call right now. Goodbye.";
/** The sandbox engine's line after a custom tool failed (a real model answers the error itself). */
export const TOOL_APOLOGY = "I'm sorry, I couldn't do that right now.";
/** After this long a custom tool's `speak` line is said while it runs. */
export const SPEAK_AFTER_MS = 1000;
/** What a keypad press reads as in the model's history. */
export const keypadText = (digits: string) => `(the caller pressed ${digits} on the keypad)`;

export class CallAgent {
  readonly tools: ReplyTools;
  private readonly walker: PathwayWalker | null;
  private readonly ownVariables: Record<string, unknown>;

  constructor(private readonly options: CallAgentOptions) {
    this.walker = options.walker ?? null;
    this.ownVariables = { ...(options.variables ?? {}) };
    this.tools = {
      specs: () => this.specs(),
      completesOnBargeIn: (name) =>
        // A move once made is made; a customer's tool may act (an order placed): once sent, it completes.
        name === CHOOSE_PATH || name === SET_VARIABLES || this.customTool(name) !== undefined
          ? true
          : options.builtins.completesOnBargeIn(name),
      call: (name, raw, signal, hooks) => this.callTool(name, raw, signal, hooks),
    };
  }

  /** The current node's id, when the call walks a pathway. */
  get node(): string | undefined {
    return this.walker && this.walker.state !== 'idle' ? this.walker.current.id : undefined;
  }

  /** The record's `pathway`, or null without one. */
  snapshot(): PathwaySnapshot | null {
    return this.walker?.snapshot() ?? null;
  }

  /** Warnings of the walk so far (each once). */
  get warnings(): string[] {
    return this.walker?.warnings ?? [];
  }

  /** The variables so far (the walk's, or the call's own). */
  get variables(): Record<string, unknown> {
    return { ...(this.walker?.variables ?? this.ownVariables) };
  }

  /** The agent's instructions and, on a pathway, what the model is told of its current step. */
  systemPrompt(): string {
    if (!this.walker) return this.options.systemPrompt;
    return `${this.options.systemPrompt}\n\n${this.walker.nodeInstructions()}`;
  }

  /**
   * Enters the pathway's start node (once, before the greeting). `say`: the
   * start's lines, which replace the agent's first message when there are any.
   */
  async start(signal: AbortSignal): Promise<string[]> {
    if (!this.walker) return [];
    return this.carry(this.walker.start(), signal);
  }

  /** Spoken words go to the model untouched (callerTurn does nothing before it): a real model, not the sandbox engine. */
  get modelTakesSpokenTurns(): boolean {
    return !this.options.sandbox;
  }

  /**
   * One caller turn (its words, or keypad digits with `keypad`), before the
   * model is asked: with the sandbox engine the words walk the pathway (and
   * may call a custom tool by its keywords); with a real model only keypad
   * digits take an edge by keywords, the model decides the rest.
   */
  async callerTurn(text: string, options: { keypad?: boolean; signal: AbortSignal }): Promise<TurnPlan> {
    const signal = this.options.signal ?? options.signal;
    const walker = this.walker;
    if (walker && walker.state === 'finished') return { say: [], askModel: true };
    if (walker && walker.state === 'conversation') {
      if (this.options.sandbox) {
        const turn = sandboxTurn(walker, text);
        const say = await this.carry(turn.step, signal);
        if (turn.reply) say.push(turn.reply);
        if (say.length || turn.step.moves.length || Object.keys(turn.step.set).length)
          return { say, askModel: !say.length && walker.state === 'conversation' };
      } else if (options.keypad) {
        const edge = keywordEdgeFor(walker, text);
        if (edge) {
          const say = await this.carry(walker.take(edge), signal);
          return { say, askModel: !say.length && walker.state === 'conversation' };
        }
      }
    }
    if (this.options.sandbox && !options.keypad) {
      const tool = this.offeredCustomTools().find((t) => t.keywords?.length && keywordsOccur(t.keywords, text));
      if (tool) return { say: await this.sandboxToolCall(tool, text, signal), askModel: false };
    }
    return { say: [], askModel: true };
  }

  /** Carries out a walk step's effects in order; answers the lines to say. A webhook's answer moves the walk on within. */
  private async carry(step: WalkStep, signal: AbortSignal): Promise<string[]> {
    const { effects } = this.options;
    const say: string[] = [];
    for (const move of step.moves) effects.move(move);
    for (const warning of step.warnings) effects.warn(warning);
    for (const effect of step.effects) {
      switch (effect.kind) {
        case 'conversation':
          if (effect.say) say.push(effect.say);
          break;
        case 'webhook': {
          let result: WebhookResult;
          try {
            result = await effects.webhook(effect, this.variables, signal);
          } catch (error) {
            if (signal.aborted) throw error;
            result = { ok: false, error: error instanceof Error ? error.message : String(error) };
          }
          if (!result.ok) effects.warn(`webhook node ${JSON.stringify(effect.node)}: ${result.error}`);
          say.push(...(await this.carry(this.walker!.completeWebhook(result), signal)));
          break;
        }
        case 'digits':
          await effects.digits(effect.send);
          break;
        case 'sms':
          await effects.sms(effect.text).catch((error: unknown) => {
            effects.warn(
              `sms node ${JSON.stringify(effect.node)}: not sent (${error instanceof Error ? error.message : String(error)})`,
            );
          });
          break;
        case 'transfer': {
          if (effect.say) say.push(effect.say);
          const arranged = await effects.transfer(effect.humanAgentId);
          if (!arranged.ok) {
            effects.warn(`transfer node ${JSON.stringify(effect.node)}: ${arranged.message ?? 'not possible'}`);
            say.push(TRANSFER_FAILED_LINE);
            effects.end();
          }
          break;
        }
        case 'end':
          if (effect.say) say.push(effect.say);
          effects.end();
          break;
        case 'failed':
          say.push(PATHWAY_FAILED_LINE);
          effects.failed(effect.message);
          break;
      }
    }
    return say;
  }

  /** The custom tools offered now: the call's, and the current node's inline ones. */
  private offeredCustomTools(): CallCustomTool[] {
    const own = this.options.customTools ?? [];
    // Inline tools of the node were declared at assembly as the call's are (header values sealed).
    const inline = (this.walker?.nodeTools() ?? []).filter((t) => typeof t === 'object') as unknown as CallCustomTool[];
    return [...own, ...inline.filter((t) => !own.some((o) => o.name === t.name))];
  }

  private customTool(name: string): CallCustomTool | undefined {
    return this.offeredCustomTools().find((t) => t.name === name);
  }

  private specs(): ToolSpec[] {
    return [
      ...this.options.builtins.specs(),
      ...(this.walker?.tools() ?? []),
      ...(this.options.invoker
        ? this.offeredCustomTools().map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }))
        : []),
    ];
  }

  private async callTool(
    name: string,
    raw: string,
    replySignal: AbortSignal,
    hooks?: { say(text: string): void },
  ): Promise<ToolSettled> {
    const walker = this.walker;
    const signal = this.options.signal ?? replySignal;
    if (walker && (name === CHOOSE_PATH || name === SET_VARIABLES)) {
      const applied = name === CHOOSE_PATH ? walker.applyChoosePath(raw) : walker.applySetVariables(raw);
      const say = await this.carry(applied.step, signal);
      const args = parseArguments(raw);
      // Where the walk is once its steps have run (a webhook's answer may have moved it on), and what the agent said there.
      const moved = 'node' in applied.result ? { ...applied.result, node: walker.current.id } : applied.result;
      const result = say.length ? { ...moved, said: say.join(' ') } : moved;
      return { arguments: args, result, say, stop: walker.state === 'finished' };
    }
    const custom = this.customTool(name);
    if (custom && this.options.invoker) {
      const args = parseArguments(raw);
      const outcome = await this.invokeCustom(custom, args, signal, hooks?.say);
      return {
        arguments: args,
        result: outcome.ok ? outcome.result : { error: outcome.error },
        ...(outcome.say.length ? { say: outcome.say } : {}),
        stop: walker?.state === 'finished',
      };
    }
    return this.options.builtins.call(name, raw, replySignal);
  }

  /**
   * One use of a custom tool: its `speak` line said when it runs over
   * SPEAK_AFTER_MS, its `assign`ed variables kept (on a pathway, through the
   * walk: they may take an `if` edge, whose lines come back in `say`).
   */
  private async invokeCustom(
    tool: CallCustomTool,
    args: unknown,
    signal: AbortSignal,
    sayNow?: (text: string) => void,
  ): Promise<({ ok: true; result: unknown } | { ok: false; error: string }) & { say: string[] }> {
    const invoker = this.options.invoker!;
    const running = invoker.invoke(tool, args, this.variables, signal);
    if (tool.speak && sayNow) {
      const waited = new AbortController();
      const spoken = sleep(this.options.clock, SPEAK_AFTER_MS, waited.signal).then(
        () => sayNow(tool.speak!),
        () => {},
      );
      void running.finally(() => waited.abort()).catch(() => {});
      void spoken;
    }
    const outcome = await running;
    if (!outcome.ok) return { ok: false, error: outcome.error, say: [] };
    const say = await this.assign(outcome.assigned, signal);
    return { ok: true, result: outcome.result, say };
  }

  /** Values a tool's `assign` picked: typed by their declaration on a pathway (one that does not fit is a warning), else kept as they are. */
  private async assign(assigned: Record<string, unknown>, signal: AbortSignal): Promise<string[]> {
    const walker = this.walker;
    if (!walker) {
      Object.assign(this.ownVariables, assigned);
      return [];
    }
    const values: Record<string, string | number | boolean> = {};
    for (const [name, raw] of Object.entries(assigned)) {
      const declared: VariableDeclaration | undefined = walker.declared[name];
      if (!declared) {
        if (typeof raw === 'string' || typeof raw === 'number' || typeof raw === 'boolean') values[name] = raw;
        continue;
      }
      const checked = toVariableValue(declared, raw);
      if ('problem' in checked) this.options.effects.warn(`tool assign: ${name} ${checked.problem}; not assigned`);
      else values[name] = checked.value;
    }
    if (!Object.keys(values).length) return [];
    return this.carry(walker.collect(values), signal);
  }

  /** The sandbox engine's use of a custom tool its keywords named: arguments read from the words, the tool's lines, an apology on failure. */
  private async sandboxToolCall(tool: CallCustomTool, text: string, signal: AbortSignal): Promise<string[]> {
    const args = sandboxArguments(tool.parameters, text, this.options.clock.now());
    const atMs = this.options.clock.now() - this.options.callStartMs;
    const spoken: string[] = [];
    // Nothing is being said yet (the turn's reply comes after): the line is said once the tool has answered.
    const outcome = await this.invokeCustom(tool, args, signal, (line) => spoken.push(line));
    this.options.onToolCall?.({
      name: tool.name,
      arguments: args,
      result: outcome.ok ? outcome.result : { error: outcome.error },
      atMs,
    });
    if (!outcome.ok) return [...spoken, TOOL_APOLOGY];
    const message = resultMessage(outcome.result);
    return [...spoken, ...outcome.say, ...(message && !outcome.say.length ? [message] : [])];
  }
}

/** A result's own line for the sandbox engine to say: a string `message` (or `say`) field of a JSON object. */
function resultMessage(result: unknown): string | null {
  if (typeof result !== 'object' || result === null) return null;
  const r = result as Record<string, unknown>;
  const text = typeof r.message === 'string' ? r.message : typeof r.say === 'string' ? r.say : null;
  return text?.trim() ? text.trim().slice(0, 500) : null;
}

function parseArguments(raw: string): unknown {
  try {
    return raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

/**
 * Arguments for a custom tool read from the caller's words by the pathway
 * extractors, one per property of its parameters: `number`/`integer`,
 * `boolean`, an `enum`, a string of `format` email or date, a property named
 * like a phone, and a string (the whole answer, only for the first required
 * string when nothing typed was found).
 */
export function sandboxArguments(
  parameters: Record<string, unknown>,
  text: string,
  now: number,
): Record<string, unknown> {
  const properties = (parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = Array.isArray(parameters.required) ? (parameters.required as string[]) : [];
  const args: Record<string, unknown> = {};
  let firstString: string | null = null;
  for (const [name, schema] of Object.entries(properties)) {
    const declaration = declarationOf(name, schema);
    if (!declaration) continue;
    if (declaration.type === 'string') {
      if (firstString === null && required.includes(name)) firstString = name;
      continue;
    }
    const value = extractValue(declaration, text, now);
    if (value !== null) args[name] = schema.type === 'integer' && typeof value === 'number' ? Math.round(value) : value;
  }
  if (firstString && !Object.keys(args).length) args[firstString] = text.trim().slice(0, 2000);
  return args;
}

function declarationOf(name: string, schema: Record<string, unknown>): VariableDeclaration | null {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string'))
    return { type: 'enum', values: schema.enum as string[] };
  switch (schema.type) {
    case 'number':
    case 'integer':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'string':
      if (schema.format === 'email') return { type: 'email' };
      if (schema.format === 'date') return { type: 'date' };
      if (/phone/i.test(name)) return { type: 'phone' };
      return { type: 'string' };
    default:
      return null;
  }
}
