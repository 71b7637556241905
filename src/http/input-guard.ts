// Refuses U+0000 anywhere in a request's path parameters, query string or body
// (values and keys), for every route, before validation. PostgreSQL cannot
// store NUL in text (`invalid byte sequence for encoding "UTF8": 0x00`, a 500)
// while SQLite can; refusing it here answers 400 alike on both databases, and
// no route or store needs its own check. The query string is checked where the
// route declares one; other routes never read it.
import type { FastifyInstance } from 'fastify';
import { AppError } from './errors.js';

/** True when a string, an own key or a nested value holds U+0000. Buffers and streams are not looked into. */
export function holdsNul(value: unknown): boolean {
  const seen = new Set<object>();
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\0')) return true;
      continue;
    }
    if (!v || typeof v !== 'object' || seen.has(v)) continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    // Binary data and streams (multipart files) are not text.
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || typeof (v as { pipe?: unknown }).pipe === 'function')
      continue;
    for (const [key, inner] of Object.entries(v)) {
      if (key.includes('\0')) return true;
      stack.push(inner);
    }
  }
  return false;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the JSON body parser when the body's text cannot hold U+0000 (it has no `\u0000` escape). */
    bodyFreeOfNul: boolean;
  }
}

/**
 * A JSON text can only yield U+0000 through the escape `\u0000` (JSON refuses
 * the raw control character), so a text without that escape needs no walk.
 * With one (even an escaped backslash before `u0000`), the parsed value is walked.
 */
export function jsonTextMayHoldNul(text: string): boolean {
  return text.includes('\\u0000');
}

/** The URL (path and query) can only yield U+0000 through `%00`, or a raw NUL that an in-process caller put there. */
const NUL_IN_URL = /%00|\0/;

export function installInputGuard(app: FastifyInstance): void {
  app.decorateRequest('bodyFreeOfNul', false);
  // Callback style and one test of the URL: a request without NUL pays two string scans, no walk, no allocation.
  app.addHook('preValidation', (request, _reply, done) => {
    let part: string | null = null;
    if (NUL_IN_URL.test(request.url)) {
      // The query string only where the route reads one (declares a schema for it): elsewhere it is ignored, and its 400 would be undocumented.
      const readsQuery = Boolean(request.routeOptions.schema?.querystring);
      part = holdsNul(request.params) ? 'path' : readsQuery && holdsNul(request.query) ? 'query string' : null;
    }
    if (
      !part &&
      request.body !== undefined &&
      request.body !== null &&
      !request.bodyFreeOfNul &&
      holdsNul(request.body)
    )
      part = 'body';
    done(part ? new AppError('invalid_input', `${part}: text may not contain the NUL character (U+0000)`) : undefined);
  });
}
