// bench/lib/dialer-cpu.ts, the campaign bench's meter of the dialer's own CPU:
// it counts what runs in a dialer scope (also after an await, in a timer set
// inside it), not what a scope left behind runs after it ended (a placed
// call's later life), nor what runs outside every scope.
import { describe, expect, it } from 'vitest';
import { enableMeter, meterReading, scoped } from '../../bench/lib/dialer-cpu.js';

/** Spins until this process has used ms more CPU (the meter counts CPU: a loaded machine only makes it longer). */
function spin(ms: number): void {
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const until = cpu() + ms;
  while (cpu() < until) {}
}
/** The next turn of the event loop: after every promise reaction queued now (a scope's end among them). */
const tick = () => new Promise((r) => setTimeout(r, 0));
const countedMs = async (fn: () => Promise<void>) => {
  const before = meterReading().byPart.round;
  await fn();
  return (meterReading().byPart.round - before) / 1000;
};

describe('the dialer CPU meter', () => {
  enableMeter();

  it('counts a scope, its awaits and its timers while the scope runs', async () => {
    const ms = await countedMs(() =>
      scoped('round', async () => {
        spin(30);
        await tick();
        spin(30);
        await new Promise<void>((r) =>
          setTimeout(() => {
            spin(30);
            r();
          }, 0),
        );
      }),
    );
    expect(ms).toBeGreaterThan(75);
    expect(ms).toBeLessThan(200);
  });

  it('leaves out what a scope left behind once it ended, and work outside every scope', async () => {
    let later!: Promise<void>;
    const ms = await countedMs(async () => {
      await scoped('round', async () => {
        spin(10);
        // Started inside, runs after the scope returned: a placed call's later life.
        later = tick().then(() => spin(60));
      });
      spin(60);
      await later;
    });
    expect(ms).toBeGreaterThan(5);
    expect(ms).toBeLessThan(40);
  });

  it('counts nested scopes once', async () => {
    const ms = await countedMs(() =>
      scoped('round', async () => {
        spin(20);
        await scoped('round', async () => spin(40));
      }),
    );
    expect(ms).toBeGreaterThan(50);
    expect(ms).toBeLessThan(120);
  });
});
