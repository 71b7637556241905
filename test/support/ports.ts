// A port for a server that must know its own address before it listens
// (PUBLIC_URL, PORT of a child process). Port 0 would pick one from the
// ephemeral range (32768–60999 here), where the kernel also places every
// outgoing connection's local port: between closing the probe and listening,
// a test's connection to PostgreSQL or a fake could take it (EADDRINUSE in CI).
// Below that range only listeners take ports, and each is probed first.
import { createServer } from 'node:net';

const LOW = 20_000;
const HIGH = 32_767;

/** Whether a server can listen on the port on 127.0.0.1 right now (it closes again at once). */
export function canListen(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port on 127.0.0.1 that is free now and outside the range outgoing connections take theirs from. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${LOW} and ${HIGH} after 50 tries`);
}
