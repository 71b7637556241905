// The application/json body parser. Two differences from Fastify's own: an
// empty body reads as no body (so routes without a body accept what
// `curl -H 'content-type: application/json'` sends), and the parse errors carry
// our codes. Like Fastify's, it refuses prototype poisoning: a `__proto__` key,
// or `constructor.prototype`, anywhere in the body is a 400, so no later
// Object.assign or spread can reach Object.prototype. And it refuses bodies
// nested deeper than MAX_JSON_DEPTH: JSON.parse copes with any depth, but the
// code after it (the validator, the Idempotency-Key hash's canonical JSON,
// JSON.stringify into a column) recurses and would die with a RangeError (500)
// on a few kilobytes of `[[[[…`. One check at the door bounds them all.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from './errors.js';
import { jsonTextMayHoldNul } from './input-guard.js';

/** Deeper than any body the API takes (its deepest, free-form metadata and connector params, need a few levels). */
export const MAX_JSON_DEPTH = 64;

/** True when arrays and objects in `value` nest deeper than `limit` levels. Iterative: it must not overflow itself. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const inner of Array.isArray(v) ? v : Object.values(v))
      if (inner && typeof inner === 'object') stack.push([inner, depth + 1]);
  }
  return false;
}

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new AppError('invalid_json', 'request body is not valid JSON'), undefined);
    }
    if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
      return done(
        new AppError('invalid_input', `request body nests arrays or objects deeper than ${MAX_JSON_DEPTH} levels`),
        undefined,
      );
    }
    // A scan of the parsed value, not of the text: `"\u005f_proto__"` is the same key.
    if (parsed && typeof parsed === 'object') {
      try {
        secureJson.scan(parsed, { protoAction: 'error', constructorAction: 'error' });
      } catch {
        return done(
          new AppError('invalid_input', 'request body may not contain a "__proto__" key or "constructor.prototype"'),
          undefined,
        );
      }
    }
    // The NUL guard (input-guard.ts) walks the parsed body only when its text holds the escape.
    request.bodyFreeOfNul = !jsonTextMayHoldNul(text);
    done(null, parsed);
  });
}
