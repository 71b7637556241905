// The fan-out writer puts its send time into the (opaque) ciphertext, so a
// subscriber computes write-to-receipt latency from the event alone. The clock
// is process.hrtime (CLOCK_MONOTONIC), shared by every process on the machine.
const MAGIC = 0x424e4348; // "BNCH"
/** The magic as the hex text it becomes in an event's content. */
export const STAMP_MAGIC_HEX = MAGIC.toString(16);

/** A ciphertext of `size` bytes whose first 16 bytes carry the current time. */
export function stampedContent(size: number, filler: Buffer): Buffer {
  const buf = Buffer.alloc(size);
  filler.copy(buf, 16, 0, size - 16);
  buf.writeUInt32BE(MAGIC, 0);
  buf.writeBigUInt64BE(process.hrtime.bigint(), 8);
  return buf;
}

/** The send time (ns) from the start of an event's content, hex or base64; null when absent. */
export function readStamp(content: string): bigint | null {
  const tries = [Buffer.from(content.slice(0, 32), 'hex'), Buffer.from(content.slice(0, 24), 'base64')];
  for (const head of tries) {
    if (head.length >= 16 && head.readUInt32BE(0) === MAGIC) return head.readBigUInt64BE(8);
  }
  return null;
}
