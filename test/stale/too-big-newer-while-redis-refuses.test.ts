// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';

const servers = closedAfterEach();

const page =
  (version: string, padBytes = 0) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, version, pad: 'x'.repeat(padBytes) }] }));
  };
const query = '{ p: catalogProducts(catalogId: "GROWN") }';

// f142f8e: "a newer answer too big to keep ends the older copy in memory and in Redis". In Redis that is the store
// script's work: when Redis does not take the store (demoted by a failover, as forget-while-redis-refuses.test.ts has
// it for deletes), the older copy stays there, memory no longer has the newer one, and the next outage serves the
// older answer from Redis to the client that was shown the newer one.
it('a newer answer too big for memory, whose store Redis refused, does not leave the older copy to stand in', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { upstream, facade } = await servers.start(page('v1'), {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v1');
  await expect.poll(async () => (await redis.client.keys('pim-graphql:lkg:*')).length).toBe(1);

  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  // 600 KB of text weighs 1.2 MB in memory: past the 1 MiB bound; Redis refuses the write.
  upstream.respond(page('v2', 600_000));
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v2');
  // Redis has refused that write.
  await expect
    .poll(async () => (await facade.get('/metrics')).text)
    .toMatch(/^redis_command_failures_total\{store="stale"\} [1-9]/m);
  await redis.client.call('REPLICAOF', 'NO', 'ONE');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = (await facade.post(query)).body;
  expect(during.data?.p?.data?.[0]?.version).not.toBe('v1');
}, 20_000);
