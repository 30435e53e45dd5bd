import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, readSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { stalledPipe } from '../helpers/pipe.ts';
import { productionDemoEnv, repoRoot } from '../helpers/process.ts';

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

// A crash injected from outside the server's code: a preload that throws on SIGUSR2, as a bug would.
const crashOnSignal = `data:text/javascript,process.on('SIGUSR2', () => setImmediate(() => { throw new Error('injected crash') }))`;

/** `node src/main.ts` (production, demo) with its stdout into a pipe nobody reads once it is ready. */
async function startWithStalledStdout(nodeArgs: string[] = []) {
  const { reader, writer } = stalledPipe();
  const child = spawn(process.execPath, [...nodeArgs, 'src/main.ts'], {
    cwd: repoRoot,
    env: productionDemoEnv(),
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
  while (!(port = /ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1])) {
    expect(child.exitCode).toBeNull();
    output += readNow(reader);
    await sleep(20);
  }
  // About 250 bytes of log line each: 2,000 fill the 64 KB pipe several times over.
  const url = `http://127.0.0.1:${port}/graphql?query=%7B__typename%7D`;
  for (let sent = 0; sent < 2_000; sent += 20) {
    await Promise.all(Array.from({ length: 20 }, () => fetch(url).then((response) => response.arrayBuffer())));
  }
  /** Resolves how the process ended, or says it still runs `seconds` after being asked to stop. */
  const outcome = (seconds: number) =>
    Promise.race([exited.then(() => 'exited'), sleep(seconds * 1_000).then(() => `still running ${seconds} s later`)]);
  return { child, outcome };
}

// A log collector that stops reading (a stalled shipper, a full node disk) must not keep a pod from
// stopping: on main, pino's synchronous flush at exit retried the full pipe forever, until Kubernetes
// killed the pod at the end of its grace period.
it('exits on SIGTERM within its grace period while nobody reads its stdout', { timeout: 30_000 }, async () => {
  const { child, outcome } = await startWithStalledStdout();
  const signalled = performance.now();
  child.kill('SIGTERM');
  expect(await outcome(15)).toBe('exited');
  // The grace period (1 s, nothing in flight) and the bound on writing what waits.
  expect(performance.now() - signalled).toBeLessThan(6_000);
  expect(child.exitCode).toBe(0);
});

// The same flush ran after an uncaught exception: a crashed server with a stalled stdout hung until the
// liveness probe killed it, serving nothing meanwhile.
it('exits with code 1 after an uncaught exception while nobody reads its stdout', { timeout: 30_000 }, async () => {
  const { child, outcome } = await startWithStalledStdout(['--import', crashOnSignal]);
  const crashed = performance.now();
  child.kill('SIGUSR2');
  expect(await outcome(10)).toBe('exited');
  expect(performance.now() - crashed).toBeLessThan(5_000);
  expect(child.exitCode).toBe(1);
});
