// What one use of a tool sends, before signing (docs/decisions/custom-tools.md):
//
//   POST: the arguments as a JSON object, with `_call: { call, variables }`
//         beside them; the body is what is signed.
//   GET:  each argument as a query parameter (strings as they are, numbers
//         and booleans written out, anything else as JSON), and `_call` one
//         query parameter holding the JSON `{ call, variables, arguments }`.
//         That JSON is what is signed (the official Standard Webhooks
//         libraries verify a JSON payload, and a query string is not one), so
//         a receiver that checks the signature reads the arguments from it;
//         the loose parameters are a convenience copy.

/** Which call is using the tool, as the receiver sees it under `_call.call`. */
export interface ToolCallInfo {
  session_id: string;
  direction: 'inbound' | 'outbound' | 'web';
  from: string | null;
  to: string | null;
}

export interface ToolRequest {
  url: string;
  method: 'POST' | 'GET';
  /** POST only. */
  body: string | null;
  /** The exact text the signature covers. */
  signedPayload: string;
}

/** Past this a GET request is refused as a tool error (servers and proxies cut long URLs near 8 KB). */
export const MAX_GET_URL_LENGTH = 8 * 1024;

export function buildToolRequest(
  tool: { url: string; method: 'POST' | 'GET' },
  args: Record<string, unknown>,
  call: ToolCallInfo,
  variables: Record<string, unknown>,
): ToolRequest {
  if (tool.method === 'POST') {
    const body = JSON.stringify({ ...args, _call: { call, variables } });
    return { url: tool.url, method: 'POST', body, signedPayload: body };
  }
  const url = new URL(tool.url);
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    url.searchParams.set(
      name,
      typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : JSON.stringify(value),
    );
  }
  const signedPayload = JSON.stringify({ call, variables, arguments: args });
  url.searchParams.set('_call', signedPayload);
  return { url: url.toString(), method: 'GET', body: null, signedPayload };
}
