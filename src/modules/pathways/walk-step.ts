// What the walker's actions yield (walker.ts): the moves made, the effects
// the session carries out, the variables set, the warnings; a tool call's
// answer for the model; the record's snapshot.
import type { VariableValue } from './values.js';

/** One node the call visited: when (ms of call time) and by which edge (`/edges/3`, `/global/0`; none for the start). */
export interface PathEntry {
  node: string;
  atMs: number;
  edge?: string;
}

/** A path entry as it happens, with the node it left (a `call_node` event). */
export interface Move extends PathEntry {
  from?: string;
}

/** What the session must do on entering a node, in order. */
export type NodeEffect =
  /** Speak `say` (filled) if any, then converse at this node. */
  | { kind: 'conversation'; node: string; say?: string }
  /** Make the request (signed, filtered, 5 s), then report it with completeWebhook. */
  | {
      kind: 'webhook';
      node: string;
      url: string;
      method: 'POST' | 'GET';
      body?: string;
      assign: Record<string, string>;
    }
  /** Send these DTMF digits (`w`: a half-second pause); the walk has moved on. */
  | { kind: 'digits'; node: string; send: string }
  /** Text the contact; the walk has moved on. */
  | { kind: 'sms'; node: string; text: string }
  | { kind: 'transfer'; node: string; humanAgentId?: string; say?: string }
  /** Say `say` if any, then hang up. */
  | { kind: 'end'; node: string; say?: string }
  /** The walk cannot go on: end the call failed, outcome `pathway_error`. */
  | { kind: 'failed'; node: string; outcome: 'pathway_error'; message: string };

/** What one action of the walker did. */
export interface WalkStep {
  moves: Move[];
  effects: NodeEffect[];
  /** Variables this step set. */
  set: Record<string, VariableValue>;
  /** New warnings (a `{{name}}` filled with nothing, a webhook value that did not fit its variable). */
  warnings: string[];
}

/** A tool call applied: the result the model is answered with (`{ error }` when refused: nothing changed), and the step. */
export interface ToolApplication {
  result: Record<string, unknown>;
  step: WalkStep;
}

/** How the session's webhook request ended. */
export type WebhookResult = { ok: true; result: unknown } | { ok: false; error: string };

/** For the call record (DESIGN.md "Record"). */
export interface PathwaySnapshot {
  id?: string;
  name: string;
  path: PathEntry[];
  variables: Record<string, unknown>;
}
