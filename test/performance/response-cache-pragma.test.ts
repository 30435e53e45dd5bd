import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';

// Each upstream answer is numbered, kept a minute: a response executed afresh shows a new number.
let served = 0;
const answer = (req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, n: served++ }] }));
};
const fixture = useFacade({ RESPONSE_CACHE_MAX_BYTES: '1048576' }, answer);
const url = (id: string) => `/graphql?query=${encodeURIComponent(`{ catalogProducts(catalogId: "${id}") }`)}`;

// RFC 9111 §5.4: a request without Cache-Control that sends `Pragma: no-cache` (HTTP/1.0 clients and proxies, `curl -H
// 'Pragma: no-cache'`) asks past every cache as `Cache-Control: no-cache` does.
describe('a client asking past caches with Pragma: no-cache', () => {
  it('is not answered from the cache of results', async () => {
    const first = await fixture.facade.get(url('pragma'));
    expect(first.body.errors).toBeUndefined();
    const { hits } = fixture.facade.app.responses!.stats();
    await fixture.facade.get(url('pragma'), { pragma: 'no-cache' });
    expect(fixture.facade.app.responses!.stats().hits, 'Pragma: no-cache was answered from the cache of results').toBe(
      hits,
    );
  });

  it('still is when Cache-Control is sent beside it: Cache-Control decides', async () => {
    await fixture.facade.get(url('pragma-beside'));
    const { hits } = fixture.facade.app.responses!.stats();
    await fixture.facade.get(url('pragma-beside'), { pragma: 'no-cache', 'cache-control': 'max-age=60' });
    expect(fixture.facade.app.responses!.stats().hits).toBe(hits + 1);
  });
});
