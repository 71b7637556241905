// One error type for the whole service. Services throw AppError with a stable
// machine-readable code; the HTTP error handler maps it to { message, code }.

/** Every error code the API answers with, and its HTTP status. */
export const errorStatus = {
  invalid_input: 400,
  invalid_json: 400,
  email_taken: 400,
  passwords_mismatch: 400,
  invalid_code: 400,
  two_factor_not_configured: 400,
  two_factor_setup_missing: 400,
  code_expired: 400,
  too_many_attempts: 400,
  invalid_token: 400,
  invalid_return_url: 400,
  provider_refused: 400,
  email_not_verified: 400,
  no_phone: 400,
  invalid_key: 400,
  invalid_signature: 400,
  unsupported_destination: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  phone_not_verified: 403,
  two_factor_required: 403,
  forbidden: 403,
  not_found: 404,
  route_not_found: 404,
  provider_not_found: 404,
  conflict: 409,
  identity_conflict: 409,
  account_exists: 409,
  payment_method_required: 409,
  idempotency_in_progress: 409,
  invalid_state: 409,
  do_not_call: 409,
  insufficient_funds: 402,
  idempotency_mismatch: 422,
  version_mismatch: 412,
  payload_too_large: 413,
  quota_exceeded: 413,
  file_too_complex: 422,
  invalid_pathway: 422,
  invalid_campaign: 422,
  unsupported_media_type: 415,
  upgrade_required: 426,
  rate_limited: 429,
  concurrency_limit: 429,
  too_many_calls: 429,
  voice_preview_quota_exceeded: 429,
  request_timeout: 408,
  uri_too_long: 414,
  headers_too_large: 431,
  internal_error: 500,
  provider_error: 502,
  not_ready: 503,
  numbers_busy: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra fields merged into the response body (e.g. checkout url). */
    readonly extra?: Record<string, unknown>,
    /** Extra response headers (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = errorStatus[code];
  }
}

export const notFound = (what = 'resource') => new AppError('not_found', `${what} not found`);
export const invalidInput = (message: string) => new AppError('invalid_input', message);
