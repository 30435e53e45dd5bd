// @module-tag redis-server
import { createConnection, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';
import { echo } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const TOKEN = 'a-long-enough-admin-token';

// A failover behind one address (a managed Redis's primary endpoint, Sentinel behind a DNS name, a Kubernetes Service):
// the old primary is demoted to a replica of the new one and keeps its connections open; the address now leads new
// connections to the new primary. Every write on the old connections answers READONLY, which breaks no connection.
async function startEndpoint(port: number) {
  let target = port;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => (client.destroy(), upstream.destroy()));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    moveTo: (next: number) => void (target = next),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

// A least-privilege user (`-@dangerous`) may not ask ROLE or INFO; HELLO is a connection command every user has.
it.each([
  ['the default user', ''],
  ['a user without @dangerous commands', 'app:a-long-password@'],
])(
  'after a failover behind the same address, purges and copies reach the new primary (%s)',
  async (_name, user) => {
    const first = await startRedis();
    onTestFinished(() => first.stop());
    const second = await startRedis();
    onTestFinished(() => second.stop());
    for (const redis of [first, second]) {
      await redis.client.call('ACL', 'SETUSER', 'app', 'on', '>a-long-password', '~*', '&*', '+@all', '-@dangerous');
    }
    const endpoint = await startEndpoint(Number(new URL(first.url).port));
    onTestFinished(() => endpoint.close());
    const upstream = await servers.startUpstream(echo);
    const a = await servers.startFacade(upstream.url, {
      REDIS_URL: endpoint.url.replace('redis://', `redis://${user}`),
      REDIS_TIMEOUT_MS: '2000',
      CACHE_ADMIN_TOKEN: TOKEN,
    });
    await untilConnected(first, 3);
    const purge = () =>
      a.request('/cache/invalidate', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ catalogId: 'C1' }),
      });
    expect((await purge()).status).toBe(200);

    // Synced in memory: a replica loading from disk leaves a dump.rdb that any Redis started later in this directory loads.
    await first.client.config('SET', 'repl-diskless-load', 'swapdb');
    // The failover: the second is the primary now, the first its replica; the address leads to the second.
    endpoint.moveTo(Number(new URL(second.url).port));
    await first.client.call('REPLICAOF', '127.0.0.1', new URL(second.url).port);

    const statuses: number[] = [];
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      const status = (await purge()).status;
      statuses.push(status);
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(statuses.at(-1), `purges after the failover: ${statuses.join(' ')}`).toBe(200);
    expect(await second.client.hget('pim-graphql:invalidated', 'catalog:C1')).not.toBeNull();
    // Answers are kept in the new primary again (the last-known-good copies), by every connection of the façade.
    expect((await a.post('{ x: catalogProducts(catalogId: "K1") }')).body.errors).toBeUndefined();
    await expect.poll(async () => (await second.client.keys('pim-graphql:lkg:*')).length, { timeout: 5_000 }).toBe(1);
  },
  30_000,
);
