import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let seq = 0;

// Random bytes are drawn in blocks: one randomFillSync per 256 ids instead of one each.
const POOL_IDS = 256;
const pool = Buffer.alloc(16 * POOL_IDS);
let poolOffset = pool.length;

function randomBlock(): Buffer {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const block = Buffer.from(pool.subarray(poolOffset, poolOffset + 16));
  poolOffset += 16;
  return block;
}

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond time, then random bits, so ids sort
 * by creation time and index well. A counter in rand_a keeps ids created in
 * the same millisecond in order within this process.
 */
export function newId(now = Date.now()): string {
  if (now <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    seq = 0;
  }
  const b = randomBlock();
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
