import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { freePort } from './free-port.ts';
import { requireProgram } from './programs.ts';

/**
 * REDIS_TIMEOUT_MS for tests that count upstream calls or stored keys but are not about a slow
 * Redis: on a loaded machine a reply past the 200 ms default would turn a hit into a miss.
 */
export const SLOW_REDIS_OK = '2000';

/**
 * Starts a throwaway `redis-server` on 127.0.0.1 with persistence off, waits until it answers,
 * and returns its URL, a client for assertions, and a stop that ends the process. Files that use
 * it carry the `redis-server` tag, so they are skipped where the program is missing.
 */
export async function startRedis() {
  const redisServer = requireProgram('redis-server');
  const port = await freePort();
  const child = spawn(
    redisServer,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const exited = once(child, 'exit');
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    retryStrategy: () => 50,
    maxRetriesPerRequest: 1,
  });
  // Refused connections are expected until the server listens; the loop below reports a real failure.
  client.on('error', () => {});
  for (let attempt = 0; ; attempt++) {
    try {
      await client.ping();
      break;
    } catch (error) {
      if (attempt > 100 || child.exitCode !== null)
        throw new Error(`redis-server on port ${port} did not start`, { cause: error });
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    client,
    /** SIGSTOP: the server keeps its connections and answers nothing, as a partition that drops packets looks. */
    freeze: () => void child.kill('SIGSTOP'),
    /** SIGCONT: it answers again. */
    thaw: () => void child.kill('SIGCONT'),
    async stop() {
      client.disconnect();
      // A stopped process ignores SIGTERM until it runs again.
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Until `connections` besides the test's own have run a command (ioredis's ready check): the façade fails fast while
 * its Redis is not ready, so a copy kept before then is never stored there (a start under load took over a second).
 */
export const untilConnected = (redis: { client: { call(...args: string[]): Promise<unknown> } }, connections: number) =>
  expect
    .poll(
      async () =>
        String(await redis.client.call('CLIENT', 'LIST'))
          .split('\n')
          .filter((line) => /\bcmd=(?!client\b|NULL\b)\S+/.test(line)).length,
      { timeout: 10_000 },
    )
    .toBeGreaterThanOrEqual(connections);
