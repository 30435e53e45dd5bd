import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { productionDemoEnv, repoRoot } from '../helpers/process.ts';

// A crash injected from outside the server's code: a preload that throws on SIGUSR2, as a bug would.
const crashOnSignal = `data:text/javascript,process.on('SIGUSR2', () => setImmediate(() => { throw new Error('injected crash') }))`;

/**
 * `node src/main.ts` (production, demo) whose stdout reader goes away once it is ready (a log shipper or a
 * container runtime's shim that died, `| head`): the next lines written meet EPIPE.
 */
async function startWithClosedStdout(nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, 'src/main.ts'], {
    cwd: repoRoot,
    env: productionDemoEnv(),
    stdio: ['ignore', 'pipe', 'ignore'],
    detached: true,
  });
  const exited = once(child, 'exit');
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  let output = '';
  let port: string | undefined;
  for await (const chunk of child.stdout!) {
    output += chunk;
    if ((port = /ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1])) break;
  }
  // The reading end closes: every write from now on fails with EPIPE.
  child.stdout!.destroy();
  const url = `http://127.0.0.1:${port}/graphql?query=%7B__typename%7D`;
  for (let i = 0; i < 50; i++) await (await fetch(url)).arrayBuffer();
  // Past sonic-boom's periodic flush (1 s): the lines above were written, and met the closed pipe.
  await sleep(1_500);
  expect((await fetch(url)).status).toBe(200);
  const outcome = (seconds: number) =>
    Promise.race([exited.then(() => 'exited'), sleep(seconds * 1_000).then(() => `still running ${seconds} s later`)]);
  return { child, outcome };
}

it('exits on SIGTERM within its grace period once its stdout reader is gone', { timeout: 30_000 }, async () => {
  const { child, outcome } = await startWithClosedStdout();
  child.kill('SIGTERM');
  expect(await outcome(10)).toBe('exited');
  expect(child.exitCode).toBe(0);
});

it('exits with code 1 after an uncaught exception once its stdout reader is gone', { timeout: 30_000 }, async () => {
  const { child, outcome } = await startWithClosedStdout(['--import', crashOnSignal]);
  child.kill('SIGUSR2');
  expect(await outcome(10)).toBe('exited');
  expect(child.exitCode).toBe(1);
});
