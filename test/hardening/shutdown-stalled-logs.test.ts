import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, readSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { stalledPipe } from '../helpers/pipe.ts';
import { repoRoot } from '../helpers/process.ts';

/** Reads what the FIFO holds now, without waiting for more. */
function readNow(fd: number): string {
  const chunk = Buffer.alloc(65_536);
  try {
    return chunk.toString('utf8', 0, readSync(fd, chunk));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return '';
    throw error;
  }
}

// A log collector that stops reading (a stalled shipper, a full node disk) must not keep a pod from
// stopping: on main, pino's synchronous flush at exit retried the full pipe forever, until Kubernetes
// killed the pod at the end of its grace period.
it('exits on SIGTERM within its grace period while nobody reads its stdout', { timeout: 30_000 }, async () => {
  const { reader, writer } = stalledPipe();
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      PORT: '0',
      HOST: '127.0.0.1',
      PIM_DEMO: 'true',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '1000',
    },
    stdio: ['ignore', writer, 'ignore'],
    detached: true,
  });
  closeSync(writer);
  const exited = once(child, 'exit');
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });

  // The ready line is the last thing read: from then on the pipe fills and stays full.
  let output = '';
  let port: string | undefined;
  while (!(port = /ready at http:\/\/localhost:(\d+)/.exec(output)?.[1])) {
    expect(child.exitCode).toBeNull();
    output += readNow(reader);
    await sleep(20);
  }
  // About 250 bytes of log line each: 2,000 fill the 64 KB pipe several times over.
  const url = `http://127.0.0.1:${port}/graphql?query=%7B__typename%7D`;
  for (let sent = 0; sent < 2_000; sent += 20) {
    await Promise.all(Array.from({ length: 20 }, () => fetch(url).then((response) => response.arrayBuffer())));
  }

  const signalled = performance.now();
  child.kill('SIGTERM');
  const timeout = sleep(15_000).then(() => 'still running 15 s after SIGTERM');
  expect(await Promise.race([exited.then(() => 'exited'), timeout])).toBe('exited');
  // The grace period (1 s, nothing in flight) and the bound on writing what waits.
  expect(performance.now() - signalled).toBeLessThan(6_000);
  expect(child.exitCode).toBe(0);
});
