import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, faults, type UpstreamHandler } from '../helpers/upstream.ts';

const TOKEN = 'a-long-enough-admin-token';
const servers = closedAfterEach();
const query = '{ products: catalogProducts(catalogId: "MASTER") }';
// The PIM says its answers stay fresh for an hour; the operator keeps last-known-good for ten minutes.
const hourFresh: UpstreamHandler = (req, res) => (res.setHeader('cache-control', 'max-age=3600'), echo(req, res));

// docs/operations.md, Invalidation: invalidated answers "stay usable as last-known-good". One fresher than the
// stale-if-error window was not kept at all (the HTTP cache was taken to cover it), so a purge, an eviction or a
// lost Redis left nothing to stand in when the PIM then failed.
it('keeps an answer fresh for longer than the stale window as last-known-good: purged, then the PIM fails', async () => {
  const { upstream, facade } = await servers.start(hourFresh, {
    CACHE_ADMIN_TOKEN: TOKEN,
    PIM_STALE_IF_ERROR_MS: '600000',
    PIM_RETRIES: '0',
  });
  expect((await facade.post(query)).body.errors).toBeUndefined();
  const purge = await fetch(`${facade.origin}/cache/invalidate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: '{"all":true}',
  });
  expect(purge.status).toBe(200);
  upstream.respond(faults.status(503));
  const { body } = await facade.post(query);
  expect(body.errors).toBeUndefined();
  expect(body.extensions.stale).toEqual([expect.objectContaining({ path: ['products'], reason: 'UPSTREAM_ERROR' })]);
});
