import { AppError } from './errors.js';

/**
 * Parses a client-supplied return URL (returnTo, returnUrl) and checks it is an
 * absolute http(s) URL without credentials on one of the allowed origins, so
 * the service never redirects or links to a page an attacker chose.
 */
export function checkReturnUrl(value: string, allowedOrigins: string[], field: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AppError('invalid_return_url', `${field} must be an absolute URL`);
  }
  if (
    !['http:', 'https:'].includes(url.protocol) ||
    url.username ||
    url.password ||
    !allowedOrigins.includes(url.origin)
  ) {
    throw new AppError('invalid_return_url', `${field} must point at an allowed origin (RETURN_URL_ORIGINS)`);
  }
  return url;
}
