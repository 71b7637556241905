// Who carries calls (an audio server, the sandbox), web calls, media sockets,
// call webhooks and temporary test calls.
import { dataFilePath } from './billing.js';
import { flag, integer, optional, section } from './declare.js';
import type { AudioConfig, Config } from './types.js';

/** Outside production, temporary calls go out from these sandbox numbers unless TEMPORARY_NUMBERS names others. */
export const SANDBOX_TEMPORARY_NUMBERS = ['+15005550101', '+15005550102', '+15005550103'];

const v = {
  audioUrl: optional(
    'AUDIO_SERVER_URL',
    'An external audio server that carries out calls (`POST {url}/calls`); otherwise the built-in voice agent, through Twilio when it is configured, else through the in-process sandbox carrier (`SANDBOX_CALLS`)',
  ),
  audioSecret: optional(
    'AUDIO_SERVER_SECRET',
    'Standard Webhooks secret (`whsec_<base64>`) shared with the audio server: signs our requests to it and its progress reports to `/api/webhooks/audio/{sessionId}`; required with `AUDIO_SERVER_URL`',
  ),
  sandboxStepMs: integer(
    'AUDIO_SANDBOX_STEP_MS',
    1500,
    1,
    60_000,
    "Sandbox audio server (`SANDBOX_CALLS=timer`): time between a call's status steps",
  ),
  sandboxCalls: optional(
    'SANDBOX_CALLS',
    'Without Twilio and `AUDIO_SERVER_URL`: `voice` — the sandbox carrier (a simulated caller on a real media stream, about a minute per call); `timer` — the old stand-in that only plays status steps every `AUDIO_SANDBOX_STEP_MS` (tests use it)',
    '`voice`',
  ),
  recording: flag(
    'CALL_RECORDING',
    'Store a two-channel WAV (caller left, agent right) with each call record of the voice agent; `0` keeps none',
    true,
  ),
  webCallMaxSeconds: integer(
    'WEB_CALL_MAX_SECONDS',
    600,
    5,
    4 * 3600,
    "Longest web call (5–14,400 s); it then ends with outcome `max_duration`. An agent's shorter `maxDurationSeconds` wins.",
  ),
  webCallConcurrency: integer(
    'WEB_CALL_CONCURRENCY_PER_USER',
    2,
    1,
    1000,
    'Web calls one account may have set up or under way at once; beyond that, `POST /api/calls/web` is 429 `too_many_calls`. A call that is set up but not connected counts until its URL expires (60 s).',
  ),
  mediaPerAddress: integer(
    'MEDIA_UNAUTHENTICATED_PER_ADDRESS',
    8,
    1,
    100_000,
    "Media WebSockets (`/api/media/twilio`, `/api/media/web`) of one remote address whose token is not accepted yet (each has 5 s for it); more are closed at once with 1013. Twilio connects from a few addresses of its own: raise it if more calls than this may be answered within the same few milliseconds. Behind a proxy, set `TRUST_PROXY` so the address is the client's.",
  ),
  mediaTotal: integer('MEDIA_UNAUTHENTICATED_MAX', 200, 1, 100_000, 'Such sockets in all, per instance'),
  webhookAllowPrivate: flag(
    'WEBHOOK_ALLOW_PRIVATE',
    'Let call webhooks target loopback and private addresses',
    false,
    'off (on outside production)',
  ),
  webhookTimeoutSeconds: integer(
    'WEBHOOK_TIMEOUT_SECONDS',
    10,
    1,
    300,
    'Time limit of one webhook delivery attempt; a timeout is retried',
  ),
  webhookPollMs: integer(
    'WEBHOOK_POLL_MS',
    1000,
    10,
    600_000,
    'How often the delivery worker looks for due retries (new deliveries wake it at once)',
  ),
  temporaryNumbers: optional(
    'TEMPORARY_NUMBERS',
    'Comma-separated E.164 numbers of your telephony account that temporary test calls are placed from (one call per number at a time)',
    'three sandbox numbers outside production; none in production',
  ),
  temporaryCallTypesFile: optional(
    'TEMPORARY_CALL_TYPES_FILE',
    'JSON file of temporary call types (`[{ id, name, description, agent: { name, personaId? }, prompt, firstMessage, maxDurationSeconds }]`) replacing the built-in ones; checked at start',
  ),
};

export const callsSection = section<
  Pick<
    Config,
    | 'audio'
    | 'webCalls'
    | 'mediaSockets'
    | 'webhooks'
    | 'temporarySessions'
    | 'sandboxCallbackDelayMs'
    | 'sandboxCallerPatienceMs'
  >
>('Calls', v, (read, { nodeEnv, cwd, problem, url }) => {
  const temporaryRaw = read(v.temporaryNumbers);
  const temporaryNumbers =
    temporaryRaw === null
      ? nodeEnv === 'production'
        ? []
        : SANDBOX_TEMPORARY_NUMBERS
      : [
          ...new Set(
            temporaryRaw
              .split(',')
              .map((n) => n.trim())
              .filter(Boolean),
          ),
        ];
  for (const n of temporaryNumbers)
    if (!/^\+[1-9]\d{6,14}$/.test(n))
      problem(`TEMPORARY_NUMBERS must be comma-separated E.164 numbers such as +14155550123 (got "${n}")`);

  const audioUrl = read(v.audioUrl);
  const audioSecret = read(v.audioSecret);
  if (audioUrl) url('AUDIO_SERVER_URL', audioUrl, ['http:', 'https:']);
  if (audioUrl && !audioSecret) problem('AUDIO_SERVER_SECRET is required with AUDIO_SERVER_URL');
  if (audioSecret && !/^whsec_[A-Za-z0-9+/]{22,}={0,2}$/.test(audioSecret))
    problem('AUDIO_SERVER_SECRET must be whsec_ followed by a base64 key of at least 16 bytes');
  const sandboxCalls = (read(v.sandboxCalls)?.toLowerCase() ?? 'voice') as AudioConfig['sandboxCalls'];
  if (sandboxCalls !== 'voice' && sandboxCalls !== 'timer')
    problem(`SANDBOX_CALLS must be voice or timer (got "${sandboxCalls}")`);

  return {
    sandboxCallbackDelayMs: 500,
    sandboxCallerPatienceMs: 12_000,
    webhooks: {
      allowPrivate: read(v.webhookAllowPrivate) || nodeEnv !== 'production',
      timeoutMs: read(v.webhookTimeoutSeconds) * 1000,
      pollIntervalMs: read(v.webhookPollMs),
    },
    audio: {
      url: audioUrl ? audioUrl.replace(/\/$/, '') : null,
      secret: audioSecret,
      sandboxStepMs: read(v.sandboxStepMs),
      sandboxCalls,
      recording: read(v.recording),
    },
    temporarySessions: {
      numbers: temporaryNumbers,
      callTypesFile: dataFilePath(read(v.temporaryCallTypesFile), cwd),
    },
    webCalls: { maxSeconds: read(v.webCallMaxSeconds), concurrencyPerUser: read(v.webCallConcurrency) },
    mediaSockets: { unauthenticatedPerAddress: read(v.mediaPerAddress), unauthenticatedTotal: read(v.mediaTotal) },
  };
});
