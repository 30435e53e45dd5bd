// @module-tag redis-server
import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

const servers = closedAfterEach();

/**
 * A TCP hop in front of Redis (a load balancer, a Service address, a sidecar). `blackhole()` makes the connections
 * open now silent for good (what a Redis primary lost with its node, or a failover behind the same address, looks
 * like: no FIN, no RST, nothing more), while every new connection reaches Redis as before.
 */
async function startHop(port: number) {
  const open = new Set<{ client: Socket; redis: Socket; dead: boolean }>();
  const server = createServer((client) => {
    const redis = connect(port, '127.0.0.1');
    const pair = { client, redis, dead: false };
    open.add(pair);
    client.on('data', (chunk) => pair.dead || redis.write(chunk));
    redis.on('data', (chunk) => pair.dead || client.write(chunk));
    const end = () => (open.delete(pair), client.destroy(), redis.destroy());
    client.on('close', end).on('error', end);
    redis.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    blackhole: () => open.forEach((pair) => (pair.dead = true)),
    close: () => void (open.forEach((pair) => (pair.client.destroy(), pair.redis.destroy())), server.close()),
  };
}

// docs/operations.md, Redis: "when Redis runs again the cache is used again with no restart". Here Redis never
// stopped: only the connections the façade holds went silent, and a new connection would work at once. Every command
// times out, the store pauses a second and tries again, on the same dead socket, for as long as the kernel keeps it
// (with unacknowledged data, tcp_retries2: some 15 minutes; for ever behind a hop that keeps its side open).
it('a Redis connection that went silent for good is replaced: the shared cache is used again', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const hop = await startHop(Number(new URL(redis.url).port));
  onTestFinished(() => hop.close());
  const upstream = await servers.startUpstream(cacheableEcho(60));
  const facade = await servers.startFacade(upstream.url, { REDIS_URL: hop.url, REDIS_TIMEOUT_MS: '200' });
  const query = (id: string) => `{ catalogProducts(catalogId: "${id}") }`;
  const cached = () => redis.client.keys('pim-graphql:http-cache:*').then((keys) => keys.length);

  // Once its connection is up, the façade stores answers in Redis.
  let w = 0;
  await expect
    .poll(async () => (await facade.post(query(`warm-${w++}`)), cached()), { timeout: 10_000 })
    .toBeGreaterThan(0);
  const before = await cached();

  hop.blackhole();
  // Answers go on (the PIM answers), and once the façade talks to Redis on a live connection, they are stored there.
  let i = 0;
  await expect
    .poll(
      async () => {
        expect((await facade.post(query(`after-${i++}`))).body.errors).toBeUndefined();
        return cached();
      },
      { timeout: 20_000, interval: 250 },
    )
    .toBeGreaterThan(before);
}, 40_000);
