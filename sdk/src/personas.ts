// Personas and integrations (spec 4.16, 4.17), and the signed payloads a
// registered server sends: a preview request is a compact JWS (ES256) signed
// with the server's private key, optionally nested in a JWE to the service's
// key; the audio comes back as a compact JWE that only that private key opens.
// Built on `jose` (WebCrypto), so it runs in Node 20+ and browsers.
import { CompactEncrypt, SignJWT, compactDecrypt, importJWK, type JWK } from 'jose';
import type { Answer, Body } from './api-types.js';
import { base64ToBytes, bytesToBase64, type Bytes } from './encoding.js';
import type { HttpCore } from './http.js';

export type Persona = Answer<'/api/persona/{id}', 'get'>;
export type EncryptedPersonaAudio = Answer<'/api/persona/{id}/play', 'post'>;
export type Integration = Answer<'/api/integrations', 'put'>;

/** A registered server's private key as POST /api/servers (mode generate) answers it: base64url PKCS#8 DER. */
export type ServerPrivateKey = string;

/** GET /api/server: the service's current key, to nest a payload in a JWE to it. */
export interface ServiceKey {
  current: string;
  keys: { jwk: Record<string, string> };
}

export interface SignPreviewOptions {
  /** The server's private key (base64url PKCS#8, from POST /api/servers). */
  privateKey: ServerPrivateKey;
  /** Text to speak (at most 1,000 characters); the persona's description when omitted. */
  text?: string;
  /** Lifetime in seconds, 1–600 (default 300). */
  expiresIn?: number;
  /** Single-use id; a random UUID when omitted. */
  jti?: string;
  /** Also encrypt the signed payload to the service key (GET /api/server). */
  encryptTo?: ServiceKey;
}

const utf8 = new TextEncoder();

function base64UrlToBytes(value: string): Bytes {
  const padded = value.replace(/-/g, '+').replace(/_/g, '/');
  return base64ToBytes(padded + '='.repeat((4 - (padded.length % 4)) % 4));
}

function subtle(): SubtleCrypto {
  const value = globalThis.crypto?.subtle;
  if (!value)
    throw new Error(
      'WebCrypto (globalThis.crypto.subtle) is not available: use Node 20+ or a browser in a secure context',
    );
  return value;
}

/** Imports the server's P-256 private key for signing (ES256) or for opening JWEs (ECDH-ES). */
function importServerKey(privateKey: ServerPrivateKey, use: 'sign' | 'decrypt'): Promise<CryptoKey> {
  const der = base64UrlToBytes(privateKey);
  return use === 'sign'
    ? subtle().importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign'])
    : subtle().importKey('pkcs8', der, { name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits']);
}

/**
 * Signs a persona preview request (`{ use: "persona-preview", textBase64? }`,
 * `exp`, `jti`) with a registered server's private key. Send the result as
 * `jwt` with that server's name to POST /api/persona/{id}/play. Each token is
 * accepted once.
 */
export async function signPreviewRequest(options: SignPreviewOptions): Promise<string> {
  const claims: Record<string, unknown> = { use: 'persona-preview' };
  if (options.text !== undefined) claims.textBase64 = bytesToBase64(utf8.encode(options.text));
  return signServerPayload(options.privateKey, claims, options);
}

/**
 * Signs `claims` (plus `iat`, `exp`, `jti`) as a compact JWS (ES256) with a
 * registered server's private key and, with `encryptTo`, nests it in a compact
 * JWE (ECDH-ES+A256KW, A256GCM, cty JWT) to the service key. The one signer
 * behind signPreviewRequest and signCallRequest.
 */
export async function signServerPayload(
  privateKey: ServerPrivateKey,
  claims: Record<string, unknown>,
  options: { expiresIn?: number; jti?: string; encryptTo?: ServiceKey } = {},
): Promise<string> {
  const expiresIn = options.expiresIn ?? 300;
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 600)
    throw new RangeError('expiresIn must be 1–600 seconds (the service refuses exp more than 10 minutes ahead)');
  const now = Math.floor(Date.now() / 1000);
  const jws = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + expiresIn)
    .setJti(options.jti ?? globalThis.crypto.randomUUID())
    .sign(await importServerKey(privateKey, 'sign'));
  if (!options.encryptTo) return jws;
  const serviceKey = await importJWK(options.encryptTo.keys.jwk as JWK, 'ECDH-ES+A256KW');
  return new CompactEncrypt(utf8.encode(jws))
    .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', cty: 'JWT', kid: options.encryptTo.current })
    .encrypt(serviceKey);
}

export interface PersonaAudio {
  bytes: Uint8Array;
  /** audio/wav or audio/mpeg. */
  contentType: string;
}

/** Opens the `{ header, content }` answer of a preview with the server's private key. */
export async function decryptPersonaAudio(
  answer: { header: { contentType?: string }; content: string },
  privateKey: ServerPrivateKey,
): Promise<PersonaAudio> {
  const { plaintext, protectedHeader } = await compactDecrypt(
    answer.content,
    await importServerKey(privateKey, 'decrypt'),
    {
      keyManagementAlgorithms: ['ECDH-ES+A256KW'],
      contentEncryptionAlgorithms: ['A256GCM'],
    },
  );
  return {
    bytes: plaintext,
    contentType: answer.header.contentType ?? protectedHeader.cty ?? 'application/octet-stream',
  };
}

export class PersonasApi {
  constructor(private readonly http: HttpCore) {}

  /** Built-in personas, then ElevenLabs voices when the server has a key. */
  list(): Promise<Answer<'/api/personas', 'get'>> {
    return this.http.request('get', '/api/personas', {});
  }

  get(id: string): Promise<Persona> {
    return this.http.request('get', '/api/persona/{id}', { params: { id } });
  }

  listExternal(): Promise<Answer<'/api/persona/list-external', 'get'>> {
    return this.http.request('get', '/api/persona/list-external', {});
  }

  /** Asks for a preview with a jwt from signPreviewRequest; open the answer with decryptPersonaAudio. */
  play(id: string, input: Body<'/api/persona/{id}/play', 'post'>): Promise<EncryptedPersonaAudio> {
    return this.http.request('post', '/api/persona/{id}/play', {
      params: { id },
      body: { server: input.server, jwt: input.jwt },
    });
  }
}

export class IntegrationsApi {
  constructor(private readonly http: HttpCore) {}

  list(): Promise<Answer<'/api/integrations', 'get'>> {
    return this.http.request('get', '/api/integrations', {});
  }

  /** Validates the credentials with the provider, then stores them; the token is masked in every answer. */
  create(input: Body<'/api/integrations', 'put'>): Promise<Integration> {
    return this.http.request('put', '/api/integrations', { body: { type: input.type, data: input.data } });
  }

  async delete(id: string): Promise<void> {
    await this.http.request('delete', '/api/integrations/{id}', { params: { id } });
  }
}
