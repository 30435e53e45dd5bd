// @module-tag redis-server
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { startRedis } from '../helpers/redis.ts';

// Catalog pages of 100 KB, kept ten minutes: a repeat is a cache hit, which no signal stops.
const page = JSON.stringify({ status: 200, meta: {}, data: [{ text: 'x'.repeat(100_000) }] });
const answer = (_req: IncomingMessage, res: ServerResponse) =>
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(page);
const servers = closedAfterEach();

// A request whose client left before its context was built (here: while its persisted query was looked
// up in Redis) counted its bytes toward PIM_MAX_INFLIGHT_BYTES for ever: the response's
// `close` and the request's abort had both fired before anything listened for them.
it('counts nothing for a request whose client left before its context was built', async () => {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const { facade } = await servers.start(answer, {
    REDIS_URL: redis.url,
    RESPONSE_CACHE_MAX_BYTES: '0',
    PIM_MAX_INFLIGHT_BYTES: String(600 * 1024),
  });
  const query = '{ a: catalogProducts(catalogId: "A") }';
  const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } };
  // Registered once the façade's Redis connection is up (a registration before is not kept).
  await expect
    .poll(async () => {
      await facade.postBody({ query, extensions });
      return (await facade.postBody({ extensions })).body.errors;
    })
    .toBeUndefined();

  // Clients ask by hash and leave at once: some leave while their lookup is on its way to Redis.
  const target = `/graphql?extensions=${encodeURIComponent(JSON.stringify(extensions))}`;
  for (let i = 0; i < 80; i++) {
    const socket = connect(facade.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET ${target} HTTP/1.1\r\nHost: a\r\nAccept: application/json\r\n\r\n`);
    await sleep(1);
    socket.resetAndDestroy();
    await sleep(30);
  }
  await sleep(300);

  // Six pages would fit in the process's 600 KiB (four in one credential's share); ten leaked pages would leave
  // room for none.
  const fresh = await facade.post('{ b: catalogProducts(catalogId: "B") c: catalogProducts(catalogId: "C") }');
  expect(fresh.body.errors).toBeUndefined();
});
