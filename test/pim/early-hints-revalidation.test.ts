import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// A PIM (or the CDN in front of it) that sends 103 Early Hints before every answer. A plain call reads through the
// 103 (admission passes informational answers on), but a revalidation of a stored answer (its ETag sent as
// If-None-Match) failed: undici's cache revalidation handler took the 103 as the final answer to the revalidation, then
// asserted on the 304 that followed, and every call of an entry gone stale failed with UPSTREAM_ERROR for as long as
// the PIM sent hints, though the PIM confirmed the stored answer each time.
it('revalidates a stored answer when the PIM sends 103 Early Hints before its 304', async () => {
  const body = JSON.stringify({ status: 200, meta: {}, data: ['v1'] });
  const handler: UpstreamHandler = (req, res) => {
    res.writeEarlyHints({ link: '</x>; rel=preload' });
    if (req.headers['if-none-match'] === '"v1"') {
      res.writeHead(304, { etag: '"v1"', 'cache-control': 'max-age=0' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', etag: '"v1"', 'cache-control': 'max-age=0' }).end(body);
  };
  // No last-known-good copy to hide the failure.
  const { upstream, facade } = await servers.start(handler, { PIM_STALE_IF_ERROR_MS: '0' });
  const first = await facade.post('{ p: catalogProducts(catalogId: "A") }');
  expect(first.body).toEqual({ data: { p: { status: 200, meta: {}, data: ['v1'] } } });
  const again = await facade.post('{ q: catalogProducts(catalogId: "A") }');
  expect(again.body.errors).toBeUndefined();
  expect(again.body.data).toEqual({ q: { status: 200, meta: {}, data: ['v1'] } });
  // The stored answer was revalidated (and confirmed by the 304), not fetched anew.
  expect(upstream.requests.map((request) => request.headers['if-none-match'])).toEqual([undefined, '"v1"']);
}, 20_000);
