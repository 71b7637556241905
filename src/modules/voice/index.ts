// The voice agent's core pipeline (docs/decisions/voice-agent.md). What the
// wiring (routes, telephony, records) uses:
//   transports:  TwilioTransport (await .started, check customParameters.token) / WebTransport
//   session:     new VoiceSession({...}).start() → CallOutcome; end(reason); leaveVoicemail(message)
//   voice activity: loadVoiceActivity() once per process, .create() per call
//   recording:   recordingWav(outcome.recording) → two-channel WAV
export {
  TwilioTransport,
  WebTransport,
  WEB_AUDIO_FORMAT,
  type Transport,
  type TransportNotice,
  type SocketLike,
  type TwilioStart,
  type WebAudioFormat,
} from './transport.js';
export {
  VoiceSession,
  DEFAULT_VOICE_SETTINGS,
  type CallControl,
  type CallOutcome,
  type CallOutcomeKind,
  type TranscriptLine,
  type VoiceSessionOptions,
  type VoiceSettings,
} from './session.js';
export { loadVoiceActivity, SileroVadModel, type VoiceActivitySource } from './silero-vad.js';
export { EnergyVad, type VoiceActivityDetector } from './vad.js';
export { recordingWav, type RecordingChannels } from './recording.js';
export {
  VOICE_TOOLS,
  ToolRegistry,
  type ToolCallRecord,
  type ToolContext,
  type KnowledgeMatch,
  type BookingResult,
  type TransferResult,
} from './tools.js';
export type { Latency, Voice } from './reply.js';
