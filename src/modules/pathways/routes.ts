// Pathways (DESIGN.md "Conversational pathways"): checking a document before
// it is stored or used by a call.
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { Type } from 'typebox';
import { errorResponses, ok } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { examplePathway } from './examples.js';
import { PathwayDocument, PathwayIssue } from './schemas.js';
import { PATHWAY_MAX_BYTES, type PathwayService } from './service.js';
import { docs, examples } from './routes.docs.js';

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
        ...docs.validatePathway,
        body: { ...PathwayDocument, examples: [examplePathway] },
        response: {
          200: ok(
            Validated,
            'The pathway is valid; warnings say what may not behave as meant',
            examples.validatePathway,
          ),
          ...errorResponses('invalid_pathway'),
        },
      },
    },
    async (request) => ({ valid: true as const, warnings: pathways.check(request.body as unknown).warnings }),
  );
}
