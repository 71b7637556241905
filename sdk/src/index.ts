// @workspace/sdk: typed client of the Workspace API with end-to-end
// encryption helpers. Browser and Node 20+ (fetch, WebCrypto, streams only).
export { WorkspaceClient, type WorkspaceClientOptions } from './client.js';
export { HttpCore, WorkspaceApiError, WorkspaceNetworkError, type FetchLike, type HttpOptions } from './http.js';
export {
  DEFAULT_STORAGE_KEY,
  SessionState,
  defaultTokenStorage,
  memoryStorage,
  type TokenListener,
  type TokenStorage,
} from './session.js';
export {
  AuthApi,
  TwoFactorApi,
  ExternalApi,
  ApiKeysApi,
  type Session,
  type RegisterInput,
  type LoginInput,
} from './auth.js';
export {
  KeysApi,
  ObjectsApi,
  ServersApi,
  STORE_NAMES,
  objectInput,
  type ObjectInput,
  type RootObject,
  type StoreKey,
  type StoreName,
  type StoredObject,
  type UsableKey,
  type Version,
} from './data.js';
export { StoreClient, type StoreInfo, type StoreRecord } from './store.js';
export { EventsApi, type EventSelector } from './events-api.js';
export { EventSubscription, type SubscribeOptions, type WorkspaceEvent } from './events.js';
export { EVENT_TYPES, type EventPayloads, type EventType, type PayloadOf } from './event-types.js';
export { SseParser, type SseFrame, type SseHandlers } from './sse.js';
export {
  DecryptionError,
  IV_BYTES,
  TAG_BYTES,
  decrypt,
  decryptJson,
  decryptText,
  encrypt,
  encryptJson,
  generateKeyBytes,
  importKey,
  payloadToStored,
  type Ciphertext,
  type EncryptedPayload,
  type KeyMaterial,
  type StoredCiphertext,
} from './crypto.js';
export {
  IntegrationsApi,
  PersonasApi,
  decryptPersonaAudio,
  signPreviewRequest,
  type EncryptedPersonaAudio,
  type Integration,
  type Persona,
  type PersonaAudio,
  type ServerPrivateKey,
  type ServiceKey,
  type SignPreviewOptions,
} from './personas.js';
export { base64ToBytes, bytesToBase64, bytesToHex, hexToBytes } from './encoding.js';
export type { Answer, ApiPath, Body, Query, Schemas, components, paths } from './api-types.js';
export { CallsApi, signCallRequest, type CallRequest, type SignCallOptions } from './calls.js';
export {
  CampaignsApi,
  DoNotCallApi,
  type Campaign,
  type CampaignContact,
  type CampaignInput,
  type CampaignStatus,
  type DoNotCallListing,
  type WaitForCampaignOptions,
} from './campaigns.js';
export {
  PathwayBuilder,
  PathwayInvalidError,
  PathwaysApi,
  definePathway,
  pathway,
  pathwayRef,
  type GlobalEdge,
  type HttpTool,
  type PathwayCheck,
  type PathwayCondition,
  type PathwayDocument,
  type PathwayEdge,
  type PathwayIssue,
  type PathwayNode,
  type PathwayNodeOf,
  type PathwayNodeType,
  type PathwayVariable,
} from './pathways.js';
export {
  WebCallConnection,
  decodeWav,
  encodeWav,
  playWavCall,
  resamplePcm,
  type PlayWavOptions,
  type PlayWavResult,
  type WebCallEnd,
  type WebCallHandlers,
  type WebCallMessage,
  type WebCallStarted,
  type WebSocketFactory,
  type WebSocketLike,
} from './web-call.js';
export { startBrowserCall, type BrowserCall, type BrowserCallOptions } from './web-call-browser.js';
