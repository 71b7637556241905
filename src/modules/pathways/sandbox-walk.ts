// The sandbox walk (DESIGN.md "Running"): a caller's turn moves the pathway
// with no model, deterministically. In order: the first global, then local,
// edge whose keywords occur in the words; else the current node's missing
// `extract` variables filled from the words, then its `if` edges, then its
// fallback. Keypad input is a turn too ("1" takes `keywords: ["1"]`).
import { isUnclear } from '../../providers/language-model/sandbox.js';
import { extractValue, keywordsOccur } from './extract.js';
import type { VariableValue } from './values.js';
import type { PathwayWalker, WalkEdge, WalkStep } from './walker.js';

export interface SandboxTurn {
  /** What the turn did: moves, effects (their `say` is spoken by the session), variables set. */
  step: WalkStep;
  /** The edge its keywords took, if any. */
  keywordEdge: WalkEdge | null;
  /**
   * A line of the walk's own to say after the effects: a question for the
   * first variable still missing here, or "say that again" for an unclear
   * turn. null: the pathway has nothing to add (a node's `say` is in the
   * effects; a node with neither `say` nor missing variables leaves the
   * answer to the sandbox dialogue engine).
   */
  reply: string | null;
}

export const UNCLEAR_REPLY = "Sorry, I didn't catch that. Could you say that again?";

const emptyStep = (): WalkStep => ({ moves: [], effects: [], set: {}, warnings: [] });

/** One caller turn at the walker's current conversation node; anything else (a webhook running, the walk over) ignores it. */
export function sandboxTurn(walker: PathwayWalker, utterance: string): SandboxTurn {
  if (walker.state !== 'conversation') return { step: emptyStep(), keywordEdge: null, reply: null };
  // Words the recogniser was not sure of are not acted on.
  if (isUnclear(utterance)) return { step: emptyStep(), keywordEdge: null, reply: UNCLEAR_REPLY };

  const keywordEdge = keywordEdgeFor(walker, utterance);
  if (keywordEdge) {
    const step = walker.take(keywordEdge);
    return { step, keywordEdge, reply: promptAfter(walker, step) };
  }

  const at = walker.current.id;
  const step = walker.collect(collected(walker, utterance));
  // The caller has answered and nothing else applies: a node with nothing left to collect leads on by its fallback.
  if (
    !step.moves.length &&
    walker.state === 'conversation' &&
    walker.current.id === at &&
    walker.missingVariables().length === 0
  ) {
    const fallback = walker.fallbackEdge();
    if (fallback) merge(step, walker.take(fallback));
  }
  return { step, keywordEdge: null, reply: promptAfter(walker, step) };
}

/**
 * The first global, then local, edge of the current node whose keywords
 * occur in the words. Also for a real model's call: keypad digits can take
 * `keywords: ["1"]` before the model is asked (walker.take).
 */
export function keywordEdgeFor(walker: PathwayWalker, utterance: string): WalkEdge | null {
  return (
    walker.choosableEdges().find((edge) => edge.keywords !== undefined && keywordsOccur(edge.keywords, utterance)) ??
    null
  );
}

/**
 * The missing variables' values in `utterance`. Typed ones are read from
 * the words; a string takes the whole answer, but only the first missing
 * string and only when no typed variable was found (one answer answers one
 * question: "415 555 0123" is the phone, not also the name).
 */
function collected(walker: PathwayWalker, utterance: string): Record<string, VariableValue> {
  const values: Record<string, VariableValue> = {};
  const now = walker.clock.now();
  const missing = walker.missingVariables();
  for (const name of missing) {
    const variable = walker.declared[name]!;
    if (variable.type === 'string') continue;
    const value = extractValue(variable, utterance, now);
    if (value !== null) values[name] = value;
  }
  const firstString = missing.find((name) => walker.declared[name]!.type === 'string');
  if (firstString && !Object.keys(values).length) {
    const value = extractValue(walker.declared[firstString]!, utterance, now);
    if (value !== null) values[firstString] = value;
  }
  return values;
}

/** A question for the first variable still missing at the current node, unless its `say` (just spoken) asks already. */
function promptAfter(walker: PathwayWalker, step: WalkStep): string | null {
  if (walker.state !== 'conversation') return null;
  const missing = walker.missingVariables()[0];
  if (missing === undefined) return null;
  const arrived = step.effects.findLast((e) => e.kind === 'conversation');
  if (arrived && arrived.node === walker.current.id && 'say' in arrived && arrived.say) return null;
  return `Could you tell me the ${missing.replace(/_/g, ' ')}?`;
}

function merge(into: WalkStep, more: WalkStep): void {
  into.moves.push(...more.moves);
  into.effects.push(...more.effects);
  Object.assign(into.set, more.set);
  into.warnings.push(...more.warnings);
}
