// A pathway's edges as the walker takes them: each with its place in the
// document (`/edges/3`, `/global/0`: the path's `edge`), grouped by the node
// they leave. A valid document is assumed (the validator's work).
import type { Condition, PathwayDocument } from './schemas.js';

/** An edge the walker may take, by its place in the document. */
export interface WalkEdge {
  ref: string;
  to: string;
  global: boolean;
  when?: string;
  keywords?: string[];
  if?: Condition;
}

/** No `when`, `keywords` or `if`: taken when its node has finished, or as the fallback. */
export const isUnconditioned = (edge: WalkEdge) =>
  edge.when === undefined && edge.keywords === undefined && edge.if === undefined;

/** The document's edges by the node they leave (in document order), and its global edges. */
export function walkEdges(document: PathwayDocument): { from: Map<string, WalkEdge[]>; global: WalkEdge[] } {
  const from = new Map<string, WalkEdge[]>();
  document.edges.forEach((edge, i) => {
    const list = from.get(edge.from) ?? [];
    list.push({ ref: `/edges/${i}`, to: edge.to, global: false, ...conditionsOf(edge) });
    from.set(edge.from, list);
  });
  const global = (document.global ?? []).map((edge, i) => ({
    ref: `/global/${i}`,
    to: edge.to,
    global: true,
    ...conditionsOf(edge),
  }));
  return { from, global };
}

function conditionsOf(edge: {
  when?: string;
  keywords?: string[];
  if?: Condition;
}): Pick<WalkEdge, 'when' | 'keywords' | 'if'> {
  return {
    ...(edge.when !== undefined ? { when: edge.when } : {}),
    ...(edge.keywords !== undefined ? { keywords: edge.keywords } : {}),
    ...(edge.if !== undefined ? { if: edge.if } : {}),
  };
}
