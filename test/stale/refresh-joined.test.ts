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
  // Answered at once, no Retry-After waited out: the refresh's one attempt, then this request's own.
  expect(upstream.requests).toHaveLength(2);
});

// Failing at once, the refresh must not make every request's refresh a new call: the PIM asked for time. With no
// retries (PIM_RETRIES=0) the retry step never reads the Retry-After, and the refresh must still honour it.
it.each<Record<string, string>>([{}, { PIM_RETRIES: '0' }])(
  'a PIM that asks for time is not asked again by the refreshes that follow (%j)',
  async (retries) => {
    const headers = { 'cache-control': 'max-age=1, stale-while-revalidate=30', age: '1' };
    const { upstream, facade } = await servers.start(withHeaders('v1', headers), {
      PIM_CACHE: 'false',
      PIM_BREAKER_THRESHOLD: '1000',
      ...retries,
    });
    await facade.post(read, {}, A);
    upstream.respond(faults.status(429, '{"status":429,"error":"slow down"}', { 'retry-after': '5' }));
    for (let i = 0; i < 6; i++) {
      expect((await facade.post(read, {}, A)).body.extensions.stale[0]).toMatchObject({ reason: 'revalidating' });
      // Time for a refresh that failed at once to be over before the next request.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // One refresh (the recording started with the PIM's new answer).
    expect(upstream.requests).toHaveLength(1);
  },
);
