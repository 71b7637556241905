// Types of requests and answers, read out of the generated OpenAPI `paths`.
// Every SDK method is typed through these, so a route whose schema changes in
// the server makes the SDK fail to type-check instead of drifting.
import type { components, paths } from './openapi-types.js';

export type { components, paths };
export type Schemas = components['schemas'];

export type HttpMethod = 'get' | 'put' | 'post' | 'patch' | 'delete';
export type ApiPath = keyof paths;
export type MethodOf<P extends ApiPath> = Extract<keyof paths[P], HttpMethod>;
export type Operation<P extends ApiPath, M extends MethodOf<P>> = paths[P][M];

type JsonContent<X> = X extends { content: { 'application/json': infer B } } ? B : never;

export type PathParamsOf<O> = O extends { parameters: { path: infer T } } ? T : never;
export type QueryOf<O> = O extends { parameters: { query?: infer T } } ? T : never;
export type BodyOf<O> = O extends { requestBody: infer R }
  ? JsonContent<R>
  : O extends { requestBody?: infer R }
    ? JsonContent<NonNullable<R>>
    : never;

type ResponsesOf<O> = O extends { responses: infer R } ? R : never;
type SuccessStatus = 200 | 201 | 202 | 204;
/** A response without content (204) reads as undefined. */
type ContentOf<X> = X extends { content: infer C } ? ([C] extends [never] ? undefined : JsonContent<X>) : undefined;

/** The body of the operation's success answer(s). */
export type SuccessOf<O> = {
  [S in keyof ResponsesOf<O>]: S extends SuccessStatus ? ContentOf<ResponsesOf<O>[S]> : never;
}[keyof ResponsesOf<O>];

/** Request body of a route: `Body<'/api/objects', 'put'>`. */
export type Body<P extends ApiPath, M extends MethodOf<P>> = BodyOf<Operation<P, M>>;
/** Success answer of a route: `Answer<'/api/objects/{id}', 'get'>`. */
export type Answer<P extends ApiPath, M extends MethodOf<P>> = SuccessOf<Operation<P, M>>;
/** Query parameters of a route; all optional (those with a server-side default are listed as required in the document). */
export type Query<P extends ApiPath, M extends MethodOf<P>> = Partial<NonNullable<QueryOf<Operation<P, M>>>>;

/** What a request needs: path parameters and a body exactly when the route has them. */
export type RequestParts<O> = ([PathParamsOf<O>] extends [never]
  ? { params?: undefined }
  : { params: PathParamsOf<O> }) &
  ([BodyOf<O>] extends [never] ? { body?: undefined } : { body: BodyOf<O> }) &
  // Query parameters with a server-side default are listed as required; none must be sent.
  ([QueryOf<O>] extends [never] ? { query?: undefined } : { query?: Partial<NonNullable<QueryOf<O>>> }) & {
    headers?: Record<string, string>;
    signal?: AbortSignal;
  };
