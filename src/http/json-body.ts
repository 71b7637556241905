// The application/json body parser. Two differences from Fastify's own: an
// empty body reads as no body (so routes without a body accept what
// `curl -H 'content-type: application/json'` sends), and the parse errors carry
// our codes. Like Fastify's, it refuses prototype poisoning: a `__proto__` key,
// or `constructor.prototype`, anywhere in the body is a 400, so no later
// Object.assign or spread can reach Object.prototype.
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { AppError } from './errors.js';

export function installJsonBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return done(new AppError('invalid_json', 'request body is not valid JSON'), undefined);
    }
    // A scan of the parsed value, not of the text: `"\u005f_proto__"` is the same key.
    if (parsed && typeof parsed === 'object') {
      try {
        secureJson.scan(parsed, { protoAction: 'error', constructorAction: 'error' });
      } catch {
        return done(new AppError('invalid_input', 'request body may not contain a "__proto__" key or "constructor.prototype"'), undefined);
      }
    }
    done(null, parsed);
  });
}
