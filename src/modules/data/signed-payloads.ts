// Signed payloads (DESIGN "Data plane model", "Calls"): the `jwt` that persona
// previews and call sessions receive. A compact JWS (ES256) signed with the
// private key of the caller's registered server named in the request,
// optionally nested in a compact JWE (ECDH-ES+A256KW, A256GCM, cty "JWT")
// encrypted to one of the service's own key pairs. `exp` (at most 10 minutes
// ahead) and `jti` are required; a jti is accepted once per server, even
// across instances (the single-use token ledger decides).
//
// Every refusal is 400 `invalid_token`, except a server the caller has not
// registered, which is 404 `not_found` (as any other reference to something
// the caller does not own). Answers going back to a registered server are
// compact JWEs to its public key (encryptTo).
import type { KeyObject } from 'node:crypto';
import {
  CompactEncrypt,
  type CompactJWEHeaderParameters,
  type JWTPayload,
  compactDecrypt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
} from 'jose';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { ServiceKeyring } from './server-keys.js';
import type { ServerService } from './server-service.js';
import type { SingleUseTokens } from '../platform/single-use.js';

/** The latest `exp` a payload may carry, in seconds after now. */
export const MAX_LIFETIME_SECONDS = 600;
/** Allowed difference between the signer's clock and ours, in seconds (both for `exp` in the past and too far ahead). */
export const CLOCK_TOLERANCE_SECONDS = 30;
/** Longest `jti` accepted (UUIDs are 36). */
const MAX_JTI_LENGTH = 200;
/** Longest token accepted before any parsing. */
export const MAX_TOKEN_LENGTH = 64 * 1024;

const JWE_ALG = 'ECDH-ES+A256KW';
const JWE_ENC = 'A256GCM';

export interface VerifyOptions {
  /** When set, the payload's `use` claim must equal it (e.g. "persona-preview"). */
  use?: string;
  /** With `use`: a payload without a `use` claim is accepted too (the spec names none for call sessions); a different one is still refused. */
  useOptional?: boolean;
  /**
   * Checks the claims after the signature and before the jti is consumed, so a
   * payload refused for its content can be corrected and sent again. Throws.
   */
  validate?: (claims: JWTPayload & Record<string, unknown>) => void;
}

export interface VerifiedPayload {
  claims: JWTPayload & Record<string, unknown>;
  /** Whether the JWS came nested in a JWE to the service's key. */
  encrypted: boolean;
  /** The registered server's public key (to encrypt the answer to it). */
  serverPublicKey: KeyObject;
}

export interface EncryptedAnswer {
  /** The JWE's protected header plus `contentType`. */
  header: CompactJWEHeaderParameters & { contentType: string };
  /** The compact JWE. */
  content: string;
}

const invalidToken = (message: string) => new AppError('invalid_token', message);

export class SignedPayloads {
  constructor(
    private readonly servers: ServerService,
    private readonly keyring: ServiceKeyring,
    private readonly singleUse: SingleUseTokens,
    private readonly clock: Clock,
  ) {}

  /**
   * Verifies `token` as signed by the caller's registered server `serverName`
   * and consumes its jti. Throws 404 not_found for a server the caller has not
   * registered and 400 invalid_token for anything else that is wrong.
   */
  async verify(
    userId: string,
    serverName: string,
    token: string,
    options: VerifyOptions = {},
  ): Promise<VerifiedPayload> {
    const serverPublicKey = await this.servers.getServerPublicKey(userId, serverName);
    if (!serverPublicKey)
      throw new AppError(
        'not_found',
        `server "${serverName}" is not one of your registered servers (POST /api/servers)`,
      );
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH)
      throw invalidToken(`jwt must be a compact JWS or JWE of at most ${MAX_TOKEN_LENGTH} characters`);

    const parts = token.split('.').length;
    let jws: string;
    if (parts === 5) jws = await this.decryptNested(token);
    else if (parts === 3) jws = token;
    else throw invalidToken('jwt is neither a compact JWS (3 parts) nor a compact JWE (5 parts)');

    const now = this.clock.now();
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(jws, serverPublicKey, {
        algorithms: ['ES256'],
        requiredClaims: ['exp', 'jti'],
        currentDate: new Date(now),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (err) {
      throw invalidToken(describeJoseError(err, serverName));
    }
    const exp = claims.exp as number;
    if (exp > Math.floor(now / 1000) + MAX_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
      throw invalidToken(`jwt exp is more than ${MAX_LIFETIME_SECONDS / 60} minutes ahead`);
    }
    const jti = claims.jti;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
      throw invalidToken(`jwt jti must be a string of 1–${MAX_JTI_LENGTH} characters`);
    if (options.use !== undefined && claims.use !== options.use && !(options.useOptional && claims.use === undefined))
      throw invalidToken(`jwt use must be "${options.use}"`);
    options.validate?.(claims as VerifiedPayload['claims']);

    const accepted = await this.singleUse.spend(
      'signed-payload',
      [userId, serverName, jti],
      (exp + CLOCK_TOLERANCE_SECONDS) * 1000,
    );
    if (!accepted) throw invalidToken('jwt jti was already used: sign a new payload for every request');
    return { claims: claims as VerifiedPayload['claims'], encrypted: parts === 5, serverPublicKey };
  }

  /**
   * Encrypts `bytes` to a registered server's public key: a compact JWE
   * (ECDH-ES+A256KW, A256GCM) whose `cty` is the media type.
   */
  async encryptTo(
    serverPublicKey: KeyObject,
    bytes: Uint8Array,
    contentType: string,
    kid?: string,
  ): Promise<EncryptedAnswer> {
    const protectedHeader: CompactJWEHeaderParameters = {
      alg: JWE_ALG,
      enc: JWE_ENC,
      cty: contentType,
      ...(kid ? { kid } : {}),
    };
    const content = await new CompactEncrypt(bytes).setProtectedHeader(protectedHeader).encrypt(serverPublicKey);
    const header = decodeProtectedHeader(content) as CompactJWEHeaderParameters;
    return { header: { ...header, contentType }, content };
  }

  /** Decrypts a JWE to the service's key (named by kid, else the current one) and returns the nested JWS. */
  private async decryptNested(token: string): Promise<string> {
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw invalidToken('jwt has an unreadable protected header');
    }
    if (header.alg !== JWE_ALG || header.enc !== JWE_ENC)
      throw invalidToken(`an encrypted jwt must use alg ${JWE_ALG} and enc ${JWE_ENC}`);
    if (typeof header.cty !== 'string' || header.cty.toUpperCase() !== 'JWT')
      throw invalidToken('an encrypted jwt must carry cty "JWT" (a nested signed JWT)');
    const keyName = typeof header.kid === 'string' ? header.kid : (await this.keyring.current()).current;
    const privateKey = (await this.keyring.isServiceServer(keyName))
      ? await this.keyring.getServicePrivateKey(keyName)
      : null;
    if (!privateKey)
      throw invalidToken(`jwt is encrypted to an unknown key "${keyName}": use the key of GET /api/server`);
    try {
      const { plaintext } = await compactDecrypt(token, privateKey, {
        keyManagementAlgorithms: [JWE_ALG],
        contentEncryptionAlgorithms: [JWE_ENC],
      });
      return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
    } catch {
      throw invalidToken('jwt could not be decrypted with the service key');
    }
  }
}

function describeJoseError(err: unknown, serverName: string): string {
  if (err instanceof joseErrors.JWTExpired) return 'jwt has expired';
  if (err instanceof joseErrors.JWTClaimValidationFailed) return `jwt claim check failed: ${err.message}`;
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'jwt must be signed with ES256';
  if (err instanceof joseErrors.JWSSignatureVerificationFailed)
    return `jwt signature does not verify with the public key of server "${serverName}"`;
  if (err instanceof joseErrors.JWTInvalid || err instanceof joseErrors.JWSInvalid)
    return `jwt is malformed: ${err.message}`;
  return 'jwt could not be verified';
}
