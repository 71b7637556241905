// The layout of a large pathway graph, off the page's thread (pathway-graph.js
// starts it; one message in, one answer out).
import dagre from './dagre.js';
import { layoutGraph } from './pathway-layout.js';

self.addEventListener('message', (event) => {
  try {
    self.postMessage({ ok: true, layout: layoutGraph(dagre, event.data) });
  } catch (error) {
    self.postMessage({ ok: false, message: String(error?.message ?? error) });
  }
});
