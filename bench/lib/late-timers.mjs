// A sampler preloaded in the server (bench/voice.ts: SERVER_NODE_OPTIONS=--import=file://$PWD/bench/lib/late-timers.mjs LAG_OUT=/tmp/x/lag):
// a 5 ms timer that records each time it ran more than 10 ms late, as [due, ran] in process.hrtime µs (the clock of
// --cpu-prof's samples), written to $LAG_OUT.<pid> at exit. bench/lib/attribute-late.mjs says what ran in those windows.
import { writeFileSync } from 'node:fs';
const out = [];
let due = process.hrtime.bigint() + 5_000_000n;
const tick = () => {
  const now = process.hrtime.bigint();
  if (now - due > 10_000_000n) out.push([Number(due / 1000n), Number(now / 1000n)]);
  due = now + 5_000_000n;
  setTimeout(tick, 5).unref();
};
setTimeout(tick, 5).unref();
process.on('exit', () => writeFileSync(`${process.env.LAG_OUT}.${process.pid}`, JSON.stringify(out)));
