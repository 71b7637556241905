// The old pathway, `{ name?, steps: string[] }` (a list of instructions pasted
// into the prompt), as a linear pathway: one conversation node per step, its
// prompt the step, each leading to the next, ending in an end node.
import { Type } from 'typebox';
import type { PathwayDocument, PathwayIssue } from './schemas.js';
import { shapeErrors } from './shape-errors.js';

/** As call payloads and agent records have always taken it. */
export const LegacyPathway = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    steps: Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { minItems: 1, maxItems: 100 }),
  },
  { additionalProperties: false },
);

/** True for `{ steps: [...] }` without the fields of a document. */
export const isLegacyPathway = (ref: Record<string, unknown>) =>
  Array.isArray(ref.steps) && ref.nodes === undefined && ref.start === undefined;

/** The linear pathway of a legacy one, or the errors of its shape (paths under `/steps`). */
export function fromLegacyPathway(ref: unknown): { document: PathwayDocument } | { errors: PathwayIssue[] } {
  const errors = shapeErrors(LegacyPathway, ref);
  if (errors.length) return { errors };
  const { name, steps } = ref as { name?: string; steps: string[] };
  const ids = steps.map((_, i) => `step-${i + 1}`);
  return {
    document: {
      name: name || 'Pathway',
      start: ids[0]!,
      nodes: [
        ...steps.map((prompt, i) => ({ id: ids[i]!, type: 'conversation' as const, prompt })),
        { id: 'end', type: 'end' as const },
      ],
      // No condition: each step leads on once it is done (the fallback edge), the last to the end.
      edges: ids.map((id, i) => ({ from: id, to: ids[i + 1] ?? 'end' })),
    },
  };
}

/** A converted pathway's error, at the step it came from (`/nodes/2/prompt` → `/steps/2`). */
export const legacyPath = (path: string) => path.replace(/^\/nodes\/(\d+)\/prompt$/, '/steps/$1');
