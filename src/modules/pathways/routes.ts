// Pathways (DESIGN.md "Conversational pathways"): checking a document before
// it is stored or used by a call.
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { examplePathway } from './examples.js';
import { PathwayDocument, PathwayIssue } from './schemas.js';
import { PATHWAY_MAX_BYTES, type PathwayService } from './service.js';

const Validated = Type.Object({
  valid: Type.Literal(true),
  warnings: Type.Array(PathwayIssue, { description: 'What may not behave as meant; the pathway still runs' }),
});

/**
 * Any JSON object passes to the handler: the validator reports what is wrong
 * with a document, with paths, as 422; the documented body is the document's
 * schema (for clients and the SDK's types), not a gate.
 */
const anyJsonObject: FastifySchemaCompiler<unknown> = () => {
  const notAnObject: FastifySchemaValidationError[] = [
    {
      instancePath: '',
      schemaPath: '#/type',
      keyword: 'type',
      params: { type: 'object' },
      message: 'must be a JSON object (a pathway document)',
    },
  ];
  const validate = (data: unknown) => {
    const isObject = typeof data === 'object' && data !== null && !Array.isArray(data);
    validate.errors = isObject ? null : notAnObject;
    return isObject;
  };
  validate.errors = null as FastifySchemaValidationError[] | null;
  return validate;
};

export interface PathwayRouteDeps {
  pathways: PathwayService;
}

export function pathwayRoutes(app: App, deps: PathwayRouteDeps) {
  const { pathways } = deps;

  app.post(
    '/api/pathways/validate',
    {
      config: { auth: 'user' },
      bodyLimit: PATHWAY_MAX_BYTES,
      validatorCompiler: anyJsonObject,
      schema: {
        tags: ['pathways'],
        operationId: 'validatePathway',
        summary: 'Check a pathway document: every error and warning, each with its path',
        description: [
          'Checks a conversational pathway `{ name, start, variables?, nodes, edges, global? }` as calls and campaigns will, without storing or running it. Any JSON object is taken (at most 1 MiB) and what is wrong with it is the answer; only a body that is not a JSON object is a 400 `invalid_input`.',
          '',
          'Errors (422 `invalid_pathway`, each `{ path, message }` with `path` a JSON pointer into the document, e.g. `/nodes/3/id`): a field of the wrong type, missing or unknown; a missing or duplicate node id; an unknown `start`, node type or edge end; an `if`, `extract`, `assign` or `{{template}}` (in `say`, `prompt`, `text`, `body`) naming an undeclared variable (`{{contact.name}}`, `{{contact.phone}}`, `{{contact.fields.X}}` and `{{now}}` are always known); a node not reachable from `start`; more than 200 nodes or 1,000 edges (then nothing else is checked).',
          '',
          'Warnings (200, the pathway runs): a `when` edge without `keywords` (the sandbox dialogue engine cannot take it); a node from which no `end` or `transfer` node can be reached.',
        ].join('\n'),
        body: { ...PathwayDocument, examples: [examplePathway] },
        response: {
          200: ok(Validated, 'The pathway is valid; warnings say what may not behave as meant', {
            valid: true,
            warnings: [
              {
                path: '/global/0/keywords',
                message: 'a `when` edge without keywords: the sandbox dialogue engine cannot take it',
              },
            ],
          }),
          ...errorResponses('invalid_pathway'),
        },
      },
    },
    async (request) => ({ valid: true as const, warnings: pathways.check(request.body as unknown).warnings }),
  );
}
