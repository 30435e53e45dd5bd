import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startUpstream } from '../helpers/upstream.ts';
import { useRedisFleet } from '../helpers/redis-fleet.ts';

// Fresh for two seconds, then revalidated by its ETag: a 304 that carries its own Cache-Control, as RFC 9111 asks.
function revalidated(req: IncomingMessage, res: ServerResponse) {
  const headers = { 'content-type': 'application/json', 'cache-control': 'max-age=2', etag: '"v1"' };
  if (req.headers['if-none-match'] === '"v1"') return void res.writeHead(304, headers).end();
  res.writeHead(200, headers).end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ id: 'p1' }] }));
}

// The copy in Redis, stale, is revalidated by its ETag and served when the PIM says it has not changed.
describe('REDIS_URL: an answer revalidated with a 304', { tags: ['redis-server'] }, () => {
  const fleet = useRedisFleet({
    upstream: () => startUpstream(revalidated),
    env: { PIM_STALE_WHILE_REVALIDATE_MS: '0', PIM_STALE_IF_ERROR_MS: '0' },
    replicas: 1,
  });

  it('is answered from the copy in Redis once the PIM says it has not changed', async () => {
    const { upstream, replicas } = fleet;
    const query = '{ catalogProducts(catalogId: "c1") }';
    const first = await replicas[0]!.post(query, {}, { 'x-api-key': 'k' });
    expect(first.body.errors).toBeUndefined();
    // Stale by then, in the HTTP cache and the parsed answers alike.
    await sleep(2_300);
    const second = await replicas[0]!.post(query, {}, { 'x-api-key': 'k' });
    expect(upstream.requests.map((r) => r.headers['if-none-match'])).toEqual([undefined, '"v1"']);
    expect(second.body).toEqual(first.body);
  });
});
