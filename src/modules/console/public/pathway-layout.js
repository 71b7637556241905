// Laying out a pathway graph with dagre (pathway-graph.js builds the model,
// this places it): the same code runs in the page for a small graph and in
// pathway-layout-worker.js for a large one, so a big or tangled pathway never
// freezes the page. The model and the answer are plain data (they cross
// postMessage): nodes `{ id, width, height }`, edges `{ v, w, name, width,
// height }` (the label's box); answered: the graph's size, each node's centre,
// each edge's points and label centre.

export function layoutGraph(dagre, model) {
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: 'TB', nodesep: 36, ranksep: 56, edgesep: 18, marginx: 16, marginy: 16 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of model.nodes) graph.setNode(node.id, { width: node.width, height: node.height });
  for (const edge of model.edges)
    graph.setEdge(edge.v, edge.w, { width: edge.width, height: edge.height, labelpos: 'c' }, edge.name);
  dagre.layout(graph);
  const { width, height } = graph.graph();
  const nodes = {};
  for (const id of graph.nodes()) {
    const { x, y } = graph.node(id);
    nodes[id] = { x, y };
  }
  const edges = {};
  for (const e of graph.edges()) {
    const { points, x, y } = graph.edge(e);
    edges[e.name] = { points: points.map((p) => ({ x: p.x, y: p.y })), x, y };
  }
  return { width, height, nodes, edges };
}
