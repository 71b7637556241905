// What the OpenAPI document says of the routes in routes.ts besides their
// schemas: summaries, descriptions and examples (src/http/route-docs.ts).
import { describeRoutes } from '../../http/route-docs.js';

export const docs = describeRoutes({
  validatePathway: {
    summary: 'Check a pathway document: every error and warning, each with its path',
    description: [
      'Checks a conversational pathway `{ name, start, variables?, nodes, edges, global? }` as calls and campaigns will, without storing or running it. Any JSON object is taken (at most 1 MiB) and what is wrong with it is the answer; only a body that is not a JSON object is a 400 `invalid_input`.',
      '',
      'Errors (422 `invalid_pathway`, each `{ path, message }` with `path` a JSON pointer into the document, e.g. `/nodes/3/id`): a field of the wrong type, missing or unknown; a missing or duplicate node id; an unknown `start`, node type or edge end; an `if`, `extract`, `assign` or `{{template}}` (in `say`, `prompt`, `text`, `body`) naming an undeclared variable (`{{contact.name}}`, `{{contact.phone}}`, `{{contact.fields.X}}` and `{{now}}` are always known); a node not reachable from `start`; more than 200 nodes or 1,000 edges (then nothing else is checked).',
      '',
      'Warnings (200, the pathway runs): a `when` edge without `keywords` (the sandbox dialogue engine cannot take it); a node from which no `end` or `transfer` node can be reached.',
    ].join('\n'),
  },
});

export const examples = {
  validatePathway: {
    valid: true as const,
    warnings: [
      {
        path: '/global/0/keywords',
        message: 'a `when` edge without keywords: the sandbox dialogue engine cannot take it',
      },
    ],
  },
};
