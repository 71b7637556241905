// The prose of a route table, kept in a file beside it (`routes.ts` ->
// `routes.docs.ts`), so the table reads as method, path, schemas and handler.
// Each entry is named by its operationId: the table names its doc
// (`...docs.createCampaign`) and the document gets that operationId.

/** What the OpenAPI document says of one route besides its schemas. */
export interface RouteDoc {
  summary: string;
  description?: string;
}

/** Each doc with its name as `operationId`, ready to spread into a route's schema. */
export function describeRoutes<const D extends Record<string, RouteDoc>>(
  docs: D,
): { [K in keyof D & string]: D[K] & { operationId: K } } {
  return Object.fromEntries(
    Object.entries(docs).map(([operationId, doc]) => [operationId, { operationId, ...doc }]),
  ) as { [K in keyof D & string]: D[K] & { operationId: K } };
}
