// The live feed's scheduling alone, without sockets or a database (issue 26): N
// members whose write costs a fixed number of µs (a busy wait standing in for
// the socket write), events handed to the feed at a steady rate by a timer (as
// the broker does), the real LiveFeed and WriteScheduler in between. Prints the
// wait from an event's hand-over to each member's write of it, and the rounds.
// It isolates what the scheduling decides (window, slices, rounds that take
// late events) from the kernel's cost, which a shared machine blurs.
//
//   npx tsx bench/feed-rounds.ts [--members=5000] [--write-us=12] [--rate=100] [--seconds=3] [--window=40] [--bytes=2300]
import { WriteScheduler } from '../src/modules/events/delivery.js';
import { Frames, StreamEvent } from '../src/modules/events/stream-event.js';
import { newHistogram, percentileMs, record } from './lib/histogram.js';

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const MEMBERS = arg('members', 5000);
const WRITE_US = arg('write-us', 12);
const RATE = arg('rate', 100);
const SECONDS = arg('seconds', 3);
const WINDOW = arg('window', 40);
/** Bytes of an event's payload (the fan-out bench's are ~2.3 KB): what the feed joins. */
const BYTES = arg('bytes', 2300);
const payload = JSON.stringify({ object_id: 'x'.repeat(Math.max(0, BYTES - 16)) });

const scheduler = new WriteScheduler(WINDOW);
const { feed } = scheduler.holdFeed('u', 'u\u0000all', (events) => Frames.join(events.map((e) => e.frames)));
const handedAt = new Map<number, number>();
const wait = newHistogram();
let writes = 0;
for (let i = 0; i < MEMBERS; i++) {
  let lastId = 0;
  feed.enter({
    flushFeed({ events }) {
      const until = performance.now() + WRITE_US / 1000;
      while (performance.now() < until);
      const now = performance.now();
      writes += 1;
      for (const event of events) {
        if (event.id <= lastId) continue;
        record(wait, (now - handedAt.get(event.id)!) * 1000);
        lastId = event.id;
      }
    },
  });
}
const total = RATE * SECONDS;
const started = performance.now();
for (let id = 1; id <= total; id++) {
  const due = started + ((id - 1) * 1000) / RATE - performance.now();
  if (due > 0) await new Promise((r) => setTimeout(r, due));
  handedAt.set(id, performance.now());
  feed.deliver(new StreamEvent({ id, user_id: 'u', type: 'object_deleted', payload, created_at: 0 }));
  scheduler.flush();
}
while (percentileMs(wait, 100) === null || wait.reduce((a, b) => a + b, 0) < total * MEMBERS)
  await new Promise((r) => setTimeout(r, 10));
const cpu = process.cpuUsage();
console.log(
  JSON.stringify({
    members: MEMBERS,
    writeUs: WRITE_US,
    rate: RATE,
    window: WINDOW,
    sliceMs: scheduler.sliceMs,
    writes,
    writesPerEvent: Number((writes / total).toFixed(1)),
    waitMs: {
      p50: percentileMs(wait, 50),
      p90: percentileMs(wait, 90),
      p99: percentileMs(wait, 99),
      max: percentileMs(wait, 100),
    },
    cpuPctOfWall: Math.round(((cpu.user + cpu.system) / 1000 / (performance.now() - started)) * 100),
  }),
);
process.exit(0);
