// Response serializers compiled on a route's first answer, not at start-up.
// Fastify compiles one fast-json-stringify serializer per route and status
// when it becomes ready; for ~150 routes that was about a quarter of the
// start-up time and a good part of the idle heap, though a given server
// answers few of them. The serializer is the one Fastify would build (same
// shared schemas, same options), only built later. (Request validators are
// compiled lazily by createValidatorCompiler, src/http/validation.ts.)
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Build = ReturnType<typeof SerializerSelector>;

export function lazySerializerBuilder(): Build {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | null = null;
      return (doc: unknown) => (serialize ??= compile(route))(doc);
    };
  };
}
