import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { withHeaders } from './reads.ts';

const servers = closedAfterEach();
const A = { 'x-api-key': 'key-of-a-123' };
const read = '{ p: catalogProducts(catalogId: "S") }';

// A background refresh is made only for a key with a copy held: a PIM asking for time (Retry-After) fails it at once,
// as it does any call a copy stands in for. On main the refresh waited the Retry-After out to ask again, and a request
// that joined its call once the stale-while-revalidate window was over waited with it, its copy unserved.
it('a request that joins a background refresh gets its kept copy at once when the PIM asks for time', async () => {
  // Already a second old as it comes (Age): stale at once, served while it is refreshed for one more second.
  const headers = { 'cache-control': 'max-age=1, stale-while-revalidate=1', age: '1' };
  const { upstream, facade } = await servers.start(withHeaders('v1', headers), {
    PIM_CACHE: 'false',
    PIM_BREAKER_THRESHOLD: '1000',
  });
  await facade.post(read, {}, A);
  upstream.respond(faults.status(503, '{"status":503,"error":"busy"}', { 'retry-after': '5' }));
  const revalidating = (await facade.post(read, {}, A)).body;
  expect(revalidating.extensions.stale[0]).toMatchObject({ reason: 'revalidating' });
  // Past the window (a protocol's time, not a wait for the server): the next request is a call, which the refresh has.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  const joined = (await facade.post(read, {}, A)).body;
  expect(joined.extensions.stale[0]).toMatchObject({ reason: 'UPSTREAM_ERROR' });
  expect(joined.data.p.data[0].version).toBe('v1');
  // Answered before anything asked the PIM again: the first read and the refresh's one attempt.
  expect(upstream.requests).toHaveLength(2);
});
