// Encrypts secrets at rest (store keys, TOTP secrets, private keys, tokens)
// with the master key: AES-256-GCM, a fresh 12-byte IV per value.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export interface SecretBox {
  seal(plain: Buffer | string): string;
  open(sealed: string): Buffer;
  openText(sealed: string): string;
}

export function createSecretBox(masterKey: Buffer): SecretBox {
  if (masterKey.length !== 32) throw new Error('master key must be 32 bytes');
  const seal = (plain: Buffer | string) => {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
    const body = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${body.toString('base64url')}`;
  };
  const open = (sealed: string) => {
    const [version, ivPart, bodyPart] = sealed.split('.');
    if (version !== VERSION || !ivPart || !bodyPart) throw new Error('not a sealed secret');
    const body = Buffer.from(bodyPart, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', masterKey, Buffer.from(ivPart, 'base64url'));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]);
  };
  return { seal, open, openText: (sealed) => open(sealed).toString('utf8') };
}
