// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// docs/operations.md (Redis): "A Redis that answers with an error (READONLY after a failover demoted it, OOM under
// noeviction) is not left alone: its refused writes are counted and skipped". Redis checks a script's deny-oom only
// before the script's first write: the bounded stores' scripts (redis-bounded.ts) write first with ZREM/HDEL/DEL
// (forget), which are no deny-oom commands, and their HSET/SET/INCRBY then go through. A Redis the operator capped
// with maxmemory and noeviction, refusing every other client's SET, grows with every answer the façade reads.
const PAD = 16_384;
const handler: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, pad: 'x'.repeat(PAD) }] }));
};
const usedMemory = async (client: { info(section: string): Promise<string> }) =>
  Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);

it('Redis out of memory under noeviction: the façade’s writes are refused and counted, Redis does not grow', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { facade } = await servers.start(handler, { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000' });
  await untilConnected(redis, 3);
  expect((await facade.post('{ catalogProducts(catalogId: "warm") }')).body.errors).toBeUndefined();
  await expect.poll(async () => (await redis.client.keys('pim-graphql:lkg:*')).length).toBe(1);

  // Filled by another client, then capped well below what Redis holds: out of memory, whatever buffers come and go.
  for (let i = 0; i < 64; i++) await redis.client.set(`other:${i}`, 'y'.repeat(8_192));
  const maxmemory = (await usedMemory(redis.client)) - 256 * 1024;
  await redis.client.config('SET', 'maxmemory-policy', 'noeviction');
  await redis.client.config('SET', 'maxmemory', String(maxmemory));
  expect(String(await redis.client.set('other:first', 'z').catch((e: unknown) => e))).toMatch(/^ReplyError: OOM/);
  const before = await redis.client.keys('pim-graphql:*');

  for (let i = 0; i < 30; i++)
    expect((await facade.post(`{ catalogProducts(catalogId: "oom-${i}") }`)).body.errors).toBeUndefined();
  // Redis still refuses an ordinary write of its other clients.
  expect(String(await redis.client.set('other:probe', 'z').catch((e) => e))).toMatch(/OOM/);
  const stored = (await redis.client.keys('pim-graphql:*')).filter((key) => !before.includes(key));
  const used = await usedMemory(redis.client);
  const metrics = (await facade.get('/metrics')).text;
  const failures = metrics.split('\n').filter((line) => line.startsWith('redis_command_failures_total'));
  expect(
    stored.length,
    `${stored.length} keys stored past OOM; Redis at ${used} bytes, maxmemory ${maxmemory}; failures counted: ${JSON.stringify(failures)}`,
  ).toBe(0);
  // Each refused write counted, by the store it was for.
  expect(failures.filter((line) => /^redis_command_failures_total\{store="[a-z]+"\} [1-9]/.test(line))).not.toEqual([]);
}, 30_000);
