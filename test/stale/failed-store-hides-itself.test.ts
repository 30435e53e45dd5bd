// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';
import { faults } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// 8099dea: a newer answer whose store Redis refused marks the key ended up to its storedAt - 1, so an older Redis copy
// does not stand in for it. storedAt is the answer's production time, taken from the PIM's Age (stale.ts keptEntry).
// The same answer, asked again once Redis is back and stored there (another CDN edge, with a larger Age: it is the
// same body, produced at the same time, the Age is an estimate), has a storedAt at or below that mark: the copy
// Redis now holds is the very answer the client was shown, yet find() takes it for the older one, deletes it and
// serves nothing at the next outage. A store Redis took replaces whatever it held: the mark no longer applies.
const page =
  (version: string, padBytes: number, age?: string) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json', ...(age ? { age } : {}) });
    res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url, version, pad: 'x'.repeat(padBytes) }] }));
  };
const query = '{ p: catalogProducts(catalogId: "GROWN") }';

it('the newer answer, stored in Redis once it is back, is served at the next outage', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { upstream, facade } = await servers.start(page('v1', 0), {
    REDIS_URL: redis.url,
    REDIS_TIMEOUT_MS: '2000',
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  const stored = async () => {
    const keys = await redis.client.keys('pim-graphql:lkg:*');
    return keys.length === 1 ? await redis.client.get(keys[0]!) : null;
  };
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v1');
  await expect.poll(stored).toContain('"v1"');

  await redis.client.call('REPLICAOF', '127.0.0.1', '1');
  // Too big for memory (1.2 MB weighed); Redis refuses its store.
  upstream.respond(page('v2', 600_000, '0'));
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v2');
  await expect
    .poll(async () => (await facade.get('/metrics')).text)
    .toMatch(/^redis_command_failures_total\{store="stale"\} [1-9]/m);
  await redis.client.call('REPLICAOF', 'NO', 'ONE');

  // The same answer again, from an edge that has held it longer: Redis takes it this time.
  upstream.respond(page('v2', 600_000, '5'));
  expect((await facade.post(query)).body.data.p.data[0].version).toBe('v2');
  await expect.poll(stored).toContain('"v2"');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = (await facade.post(query)).body;
  expect(during.errors).toBeUndefined();
  expect(during.extensions?.stale).toBeDefined();
  expect(during.data.p.data[0].version).toBe('v2');
}, 20_000);
