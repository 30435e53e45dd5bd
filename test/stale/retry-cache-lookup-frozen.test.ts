// @module-tag redis-server
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

const servers = closedAfterEach();

// docs/operations.md, Stale answers: "Redis away, ... a request waits on the silent Redis at most twice, for the HTTP
// cache's lookup and for the records". With the HTTP cache on (the default), each retry of a 503 is a new dispatch
// through undici's cache interceptor, and its store looked the URL up in the frozen Redis again: four waits of
// REDIS_TIMEOUT_MS for a call and its three retries.
it("a call's retries do not wait on a frozen Redis for the HTTP cache's lookup again", async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  let calls = 0;
  const upstream = await servers.startUpstream((_req, res) => {
    calls++;
    res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
  });
  const facade = await servers.startFacade(upstream.url, {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '300',
    PIM_RETRIES: '3',
    PIM_RETRY_BASE_MS: '1',
  });
  await untilConnected(redis, 3);
  redis.freeze();

  const answer = await facade.post('{ catalogProducts(catalogId: "never-seen") }');
  expect(answer.body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  expect(calls).toBe(4);
  // One lookup timed out, the first; the retries' were misses at once.
  const metrics = (await facade.get('/metrics')).text;
  expect(/^redis_command_failures_total\{store="cache"\} (\d+)$/m.exec(metrics)?.[1]).toBe('1');
});
