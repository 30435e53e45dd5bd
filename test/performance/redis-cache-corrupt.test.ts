// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { startRedis } from '../helpers/redis.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// Replica A stores a fresh answer (max-age=60) in the shared HTTP cache. Its body there is then unreadable (cut short,
// or written by another version). Replica B, asked for it, replays Redis's bytes as the PIM's answer: it counts
// pim_upstream_faults_total{fault="not_json"} and logs "Upstream answers 2xx with a body that is not JSON (a
// maintenance or proxy page?)" against a PIM it never called, and keeps not calling it for the entry's whole
// lifetime. A copy the façade cannot read is a cache miss: the PIM is healthy and should be asked.
it('an unreadable HTTP cache entry in Redis is a miss, not a fault of the PIM', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const upstream = await servers.startUpstream(cacheableEcho(60));
  const env = { REDIS_URL: redis.url, REDIS_TIMEOUT_MS: '2000', PIM_RETRIES: '0' };
  const a = await servers.startFacade(upstream.url, env);
  const { logger, lines } = captureLogs('info');
  const b = await servers.startFacade(upstream.url, env, { logger });
  const query = `{ x: catalogProducts(catalogId: "X1") }`;
  const stored = () => redis.client.keys('pim-graphql:http-cache:*');
  await expect.poll(async () => (await a.post(query), (await stored()).length)).toBe(1);
  const [key] = await stored();
  // Each variant keeps its metadata line; its body loses its last bytes.
  for (const [field, value] of Object.entries(await redis.client.hgetallBuffer(key!))) {
    await redis.client.hset(key!, field, value.subarray(0, value.length - 5));
  }

  const calls = upstream.requests.length;
  const answer = await b.post(query);
  expect(answer.body.errors).toBeUndefined();
  expect(answer.body.data.x.data).toEqual([{ url: '/pxm/pimapi/v1/catalogs/X1/products/search' }]);
  const metrics = (await b.get('/metrics')).text;
  expect(metrics).not.toMatch(/pim_upstream_faults_total\{fault="not_json"\} [1-9]/);
  expect(lines.filter((line) => /not JSON/.test(line.msg))).toEqual([]);
  expect(upstream.requests.length).toBe(calls + 1);
}, 20_000);
