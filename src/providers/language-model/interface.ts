// The language model of a live call (DESIGN.md "Voice agent"): any
// OpenAI-compatible /chat/completions, streamed, with tool calls; or, without
// LLM_URL, the deterministic sandbox dialogue engine behind the same interface.

/** OpenAI chat message shapes, as sent to /chat/completions. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A tool as the model sees it (OpenAI `tools[].function`). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

/** What a streamed answer yields, in order. */
export type ModelDelta =
  | { type: 'text'; text: string }
  /** A whole tool call, yielded once its arguments are complete. */
  | { type: 'tool_call'; call: ChatToolCall }
  | { type: 'done'; finishReason: 'stop' | 'tool_calls' | 'length' | string };

export interface CompletionRequest {
  messages: ChatMessage[];
  tools: ToolSpec[];
  /** The tool the answer must call (OpenAI `tool_choice`): one request, one structured answer (post-call analysis). */
  toolChoice?: string;
  signal: AbortSignal;
}

export interface LanguageModel {
  /** `openai` (any compatible server) or `sandbox`. */
  readonly name: string;
  readonly sandbox: boolean;
  /** Streams one answer. Throws a ProviderFailure on 4xx/5xx, a broken stream or abort. */
  complete(request: CompletionRequest): AsyncIterable<ModelDelta>;
}
