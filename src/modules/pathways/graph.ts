// The graph checks of a pathway: every node reachable from the start (an
// error: a node nobody can reach is a mistake), and from every node some end
// or transfer (a warning: a call there can only end by the caller hanging up).

import type { PathwayIssue } from './schemas.js';

export interface PathwayGraph {
  /** The nodes with a usable id (the first of duplicates), with their index in the document. */
  nodes: Array<{ id: string; index: number; type: string }>;
  /** Edges whose both ends are known nodes. */
  edges: Array<{ from: string; to: string }>;
  /** Targets of global edges (known nodes): reachable from every conversation node. */
  global: string[];
  /** The start node, or null when it is unknown (its own error says so). */
  start: string | null;
}

export function graphIssues(graph: PathwayGraph): { errors: PathwayIssue[]; warnings: PathwayIssue[] } {
  const next = new Map<string, string[]>(graph.nodes.map((n) => [n.id, []]));
  const previous = new Map<string, string[]>(graph.nodes.map((n) => [n.id, []]));
  const link = (from: string, to: string) => {
    next.get(from)!.push(to);
    previous.get(to)!.push(from);
  };
  for (const edge of graph.edges) link(edge.from, edge.to);
  for (const node of graph.nodes) if (node.type === 'conversation') for (const to of graph.global) link(node.id, to);

  const errors: PathwayIssue[] = [];
  const warnings: PathwayIssue[] = [];
  const reachable = graph.start === null ? null : walk([graph.start], next);
  const finishing = walk(
    graph.nodes.filter((n) => n.type === 'end' || n.type === 'transfer').map((n) => n.id),
    previous,
  );
  for (const node of graph.nodes) {
    const path = `/nodes/${node.index}`;
    if (reachable && !reachable.has(node.id)) {
      errors.push({
        path,
        message: `node ${JSON.stringify(node.id)} cannot be reached from the start node ${JSON.stringify(graph.start)}`,
      });
    } else if (!finishing.has(node.id)) {
      warnings.push({ path, message: `no end or transfer node can be reached from node ${JSON.stringify(node.id)}` });
    }
  }
  return { errors, warnings };
}

/** Every node reachable from `from` along `links`, `from` included. */
function walk(from: string[], links: Map<string, string[]>): Set<string> {
  const seen = new Set(from);
  const queue = [...from];
  while (queue.length) {
    for (const id of links.get(queue.pop()!) ?? []) {
      if (seen.has(id)) continue;
      seen.add(id);
      queue.push(id);
    }
  }
  return seen;
}
