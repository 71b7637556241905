// What a real model sees of the pathway at the current node (DESIGN.md
// "Running"): the node's instructions beside the agent's own, and the two
// pathway tools, choose_path and set_variables, with JSON Schemas generated
// from the node's edges and the variables it collects.
import type { ToolSpec } from '../../providers/language-model/interface.js';
import type { WalkEdge } from './edges.js';
import type { PathwayDocument, PathwayNode } from './schemas.js';
import { type VariableDeclaration, variableSchema } from './values.js';

/** What this file reads of the walker (walker.ts implements it; an interface, so the two do not import each other). */
export interface PathwayView {
  readonly document: PathwayDocument;
  readonly declared: Readonly<Record<string, VariableDeclaration>>;
  readonly current: PathwayNode;
  readonly state: 'idle' | 'conversation' | 'webhook' | 'finished';
  readonly failed: string | null;
  readonly variables: Readonly<Record<string, unknown>>;
  extractHere(): string[];
  choosableEdges(): WalkEdge[];
  fill(text: string): string;
}

export const CHOOSE_PATH = 'choose_path';
export const SET_VARIABLES = 'set_variables';

const quoted = (text: string) => JSON.stringify(text);

/** An edge's condition in words: its `when`, else the caller's keywords, else "this step is done" (the fallback). */
export function describeEdge(edge: WalkEdge): string {
  if (edge.when !== undefined) return edge.when;
  if (edge.keywords !== undefined) return `the caller says ${edge.keywords.map(quoted).join(' or ')}`;
  return 'this step is done (nothing else applies)';
}

function pathLines(edges: WalkEdge[]): string[] {
  return edges.map((e) => `- ${quoted(e.to)}: ${describeEdge(e)}${e.global ? ' (at any step)' : ''}`);
}

/** The current node's instructions for the model; `said` is the `say` the session spoke on arriving. */
export function describeInstructions(walker: PathwayView, said: string | undefined): string {
  const node = walker.current;
  const lines = [
    `This call follows the conversation pathway ${quoted(walker.document.name)}. The current step is ${quoted(node.id)}.`,
  ];
  if (walker.state === 'finished')
    return [
      ...lines,
      walker.failed ? 'The pathway cannot go on: end the call politely.' : 'The pathway has ended.',
    ].join('\n');
  if (walker.state !== 'conversation' || node.type !== 'conversation')
    return [...lines, 'A step without speech is running: if the caller speaks, say briefly that you are on it.'].join(
      '\n',
    );
  if (said !== undefined && said !== '')
    lines.push(`On arriving at this step the agent said, as written (do not say it again): ${quoted(said)}`);
  if (node.prompt !== undefined) lines.push(`What to do at this step: ${walker.fill(node.prompt)}`);
  const extract = walker.extractHere();
  if (extract.length) {
    lines.push(
      `Collect at this step, calling ${SET_VARIABLES} as soon as the caller gives a value (once all have values the pathway moves on by itself, so choose a path first if one applies):`,
    );
    for (const name of extract) {
      const variable = walker.declared[name]!;
      const known = walker.variables[name];
      lines.push(
        `- ${name} (${variable.type}${variable.values ? `: ${variable.values.join(', ')}` : ''})${variable.description ? `: ${variable.description}` : ''}${known !== undefined && known !== '' && known !== null ? ` [has ${JSON.stringify(known)}]` : ' [still needed]'}`,
      );
    }
  }
  const known = Object.entries(walker.variables).filter(([, v]) => v !== undefined && v !== null && v !== '');
  lines.push(
    known.length ? `Variables so far: ${JSON.stringify(Object.fromEntries(known))}` : 'Variables so far: none.',
  );
  const edges = walker.choosableEdges();
  if (edges.length)
    lines.push(`Paths from here (call ${CHOOSE_PATH} with \`to\` once one applies):`, ...pathLines(edges));
  else
    lines.push(
      'No path leads on from here by the conversation: the pathway moves on by itself when its conditions are met.',
    );
  return lines.join('\n');
}

/** choose_path: `{ to }`, an enum of the targets of the node's choosable edges. */
export function choosePathTool(edges: WalkEdge[]): ToolSpec {
  const targets = [...new Set(edges.map((e) => e.to))];
  return {
    name: CHOOSE_PATH,
    description: `Moves the call along its pathway to the next step, when the conversation meets a path's condition. Paths:\n${pathLines(edges).join('\n')}`,
    parameters: {
      type: 'object',
      properties: { to: { type: 'string', enum: targets, description: 'The step to go to' } },
      required: ['to'],
      additionalProperties: false,
    },
  };
}

/** set_variables: an object of the node's `extract` variables, each typed by its declaration. */
export function setVariablesTool(walker: PathwayView, extract: string[]): ToolSpec {
  return {
    name: SET_VARIABLES,
    description: `Records what the caller said, as the pathway's variables: ${extract.join(', ')}. Give only values the caller actually gave.`,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(extract.map((name) => [name, variableSchema(name, walker.declared[name]!)])),
      minProperties: 1,
      additionalProperties: false,
    },
  };
}
