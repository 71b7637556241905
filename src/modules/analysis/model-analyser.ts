// The analysis by the configured model (LLM_URL): one request with one tool
// whose parameters are the analysis's JSON Schema (the agent's fields in
// `data`), the tool forced. The arguments are validated against that schema
// before anything is stored; an invalid answer (or none) is asked for once
// more with what was wrong, then the analysis is `failed` with the reason.
import type { ChatMessage, LanguageModel, ToolSpec } from '../../providers/language-model/interface.js';
import type { ParameterSchemas } from '../custom-tools/parameters.js';
import type { CallFacts } from './facts.js';
import type { AnalysisTask, CallAnalysis } from './schemas.js';
import { type AnalysisSettings, dataSchema } from './settings.js';

export const ANALYSIS_TOOL = 'record_call_analysis';
/** The whole request (both attempts) may take this long. */
const DEADLINE_MS = 60_000;

/** The tool's parameters: what the model must answer for these settings. */
export function analysisToolSchema(settings: AnalysisSettings): Record<string, unknown> {
  const properties: Record<string, unknown> = {
    success: {
      type: ['boolean', 'null'],
      description: 'Whether the call met the success criteria (null when it cannot be told)',
    },
    successReason: { type: 'string', maxLength: 500, description: 'Why, in one sentence' },
    data: dataSchema(settings.schema),
    tasks: {
      type: 'array',
      maxItems: 20,
      description: settings.tasks === false ? 'Always empty' : 'One task for each request the call left open',
      items: {
        type: 'object',
        properties: {
          title: { type: 'string', minLength: 1, maxLength: 300 },
          dueDate: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
        },
        required: ['title'],
        additionalProperties: false,
      },
      ...(settings.tasks === false ? { maxItems: 0 } : {}),
    },
    sentiment: { type: 'string', enum: ['positive', 'neutral', 'negative'], description: "The caller's mood" },
  };
  const required = ['success', 'data', 'tasks', 'sentiment'];
  if (settings.summary !== false) {
    properties.summary = {
      type: 'string',
      minLength: 1,
      maxLength: 2000,
      description: 'What the call was about and what was done, in two or three sentences',
    };
    required.unshift('summary');
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

function transcriptText(facts: CallFacts): string {
  const lines = facts.transcript.map((l) => `${l.role === 'agent' ? facts.agent.name : 'Caller'}: ${l.text}`);
  const tools = facts.toolCalls.map(
    (t) => `- ${t.name}(${JSON.stringify(t.arguments)}) -> ${JSON.stringify(t.result)}`,
  );
  const variables = Object.entries(facts.variables).map(([k, v]) => `- ${k} = ${JSON.stringify(v)}`);
  return [
    `Call ${facts.direction}, ended ${facts.outcome ?? facts.status} after ${facts.durationSeconds} s on ${new Date(facts.endedAt).toISOString().slice(0, 10)}.`,
    'Transcript:',
    ...lines,
    ...(tools.length ? ['Tool calls:', ...tools] : []),
    ...(variables.length ? ['Variables the call collected:', ...variables] : []),
  ].join('\n');
}

function messages(facts: CallFacts, settings: AnalysisSettings): ChatMessage[] {
  const criteria = settings.successCriteria
    ? `Success criteria: ${settings.successCriteria}`
    : 'Success: the caller got what they called for.';
  return [
    {
      role: 'system',
      content: `You analyse a finished phone call of the agent ${facts.agent.name}. Call ${ANALYSIS_TOOL} once with your analysis; fill data only with what the call said (leave a field out when it was not given); dates as YYYY-MM-DD. ${criteria}`,
    },
    { role: 'user', content: transcriptText(facts) },
  ];
}

/** One answer of the model: the tool's arguments, or why there are none. */
async function ask(
  model: LanguageModel,
  history: ChatMessage[],
  tool: ToolSpec,
  signal: AbortSignal,
): Promise<{ args: unknown; raw: string } | { problem: string }> {
  let raw: string | null = null;
  let text = '';
  for await (const delta of model.complete({ messages: history, tools: [tool], toolChoice: tool.name, signal })) {
    if (delta.type === 'tool_call' && delta.call.function.name === tool.name && raw === null)
      raw = delta.call.function.arguments;
    if (delta.type === 'text') text += delta.text;
  }
  if (raw === null) return { problem: `the model did not call ${tool.name}${text ? ` (it wrote text)` : ''}` };
  try {
    return { args: JSON.parse(raw), raw };
  } catch {
    return { problem: `the arguments of ${tool.name} are not JSON` };
  }
}

export class ModelAnalyser {
  constructor(
    private readonly model: LanguageModel,
    private readonly schemas: ParameterSchemas,
  ) {}

  async analyse(facts: CallFacts, settings: AnalysisSettings, now: () => number): Promise<CallAnalysis> {
    const parameters = analysisToolSchema(settings);
    const tool: ToolSpec = { name: ANALYSIS_TOOL, description: 'Records the analysis of the call', parameters };
    const history = messages(facts, settings);
    const signal = AbortSignal.timeout(DEADLINE_MS);
    let problem = '';
    for (let attempt = 1; attempt <= 2; attempt++) {
      let answer: Awaited<ReturnType<typeof ask>>;
      try {
        answer = await ask(this.model, history, tool, signal);
      } catch (err) {
        // The model refused or broke (a ProviderFailure): no second request for a server that is down.
        return failed(`the model failed: ${(err as Error).message}`, now());
      }
      if ('problem' in answer) problem = answer.problem;
      else {
        const invalid = this.schemas.argumentProblem(parameters, answer.args);
        if (invalid === null) return completed(answer.args as ModelAnswer, now());
        problem = `the answer does not match the schema: ${invalid}`;
        history.push(
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'analysis_1', type: 'function', function: { name: ANALYSIS_TOOL, arguments: answer.raw } },
            ],
          },
          { role: 'tool', tool_call_id: 'analysis_1', content: JSON.stringify({ error: problem }) },
        );
      }
      if (attempt === 1 && 'problem' in answer)
        history.push({
          role: 'user',
          content: `${problem}. Call ${ANALYSIS_TOOL} with arguments matching its schema.`,
        });
    }
    return failed(`${problem} (asked twice)`, now());
  }
}

interface ModelAnswer {
  summary?: string;
  success: boolean | null;
  successReason?: string;
  data: CallAnalysis['data'];
  tasks: AnalysisTask[];
  sentiment: 'positive' | 'neutral' | 'negative';
}

function completed(answer: ModelAnswer, at: number): CallAnalysis {
  return {
    status: 'completed',
    summary: answer.summary ?? null,
    success: answer.success,
    ...(answer.successReason ? { successReason: answer.successReason } : {}),
    data: answer.data,
    tasks: answer.tasks.map((t) => ({ title: t.title, ...(t.dueDate ? { dueDate: t.dueDate } : {}) })),
    sentiment: answer.sentiment,
    by: 'model',
    analysedAt: new Date(at).toISOString(),
  };
}

export function failed(reason: string, at: number, by: 'model' | 'sandbox' = 'model'): CallAnalysis {
  return {
    status: 'failed',
    summary: null,
    success: null,
    data: {},
    tasks: [],
    by,
    reason: reason.slice(0, 500),
    analysedAt: new Date(at).toISOString(),
  };
}
