// Iteration helper (not part of npm run bench): the streams floor alone, N times with given slices.
//   npx tsx bench/streams-floor-try.ts --slice=0,10 [--subscribers=5000] [--seconds=5]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runFanout } from './lib/fanout.js';

const flag = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const slices = (flag('slice') ?? '10').split(',');
const subscribers = Number(flag('subscribers') ?? 5000);
const seconds = Number(flag('seconds') ?? 5);
const rate = Number(flag('rate') ?? 100);
const dataDir = mkdtempSync(join(tmpdir(), 'streams-floor-'));
try {
  for (const slice of slices) {
    const r = await runFanout({
      dataDir,
      env: { FLOOR_SLICE_MS: slice },
      users: [{ id: 'floor', token: 'floor' }],
      subscribers,
      mode: 'shared',
      rate,
      seconds,
      contentBytes: 1024,
      rssLimitMb: 1500,
      graceMs: 15_000,
      floor: true,
      clientProfDir: flag('client-profile'),
    });
    console.log(
      JSON.stringify({
        slice,
        p50: r.p50,
        p99: r.p99,
        max: r.max,
        put: [r.putP50, r.putP99],
        failed: r.writesFailed,
        received: r.deliveriesReceived,
        expected: r.deliveriesExpected,
        serverCpu: r.serverCpuPct,
        clientCpu: r.clientCpuPct,
        stats: { ...r.floorStats, roundLog: undefined },
        cpuPerDelivery: r.cpuPerDelivery,
        roundLog: r.floorStats?.roundLog,
      }),
    );
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
