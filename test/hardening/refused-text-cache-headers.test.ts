import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// Ten aliases of 400 characters of one cacheable search: one call, ~1 KB of answers counted by send(), but a text
// of ~5 KB, past PIM_MAX_REQUEST_BYTES as it is serialized.
const query = `{ ${Array.from({ length: 10 }, (_, i) => `a${i}${'_'.repeat(400)}: catalogProducts(catalogId: "C")`).join(' ')} }`;

it('a GET result refused as it is serialized is not sent as a cacheable success', async () => {
  const { facade } = await servers.start(cacheableEcho(60), { PIM_MAX_REQUEST_BYTES: '4000' });
  const answer = await facade.get(`/graphql?query=${encodeURIComponent(query)}`);
  expect(answer.body?.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  expect(answer.body?.data).toBeNull();
  expect(answer.headers.get('cache-control'), 'an error a CDN and browsers keep for a minute').toMatch(/no-store/);
  expect(answer.headers.get('surrogate-key')).toBeNull();
});

// The refused text's result was still stored in the cache of whole results: never served (a hit past the same cap
// executes again), but it took room there, up to a sixteenth of RESPONSE_CACHE_MAX_BYTES each.
it('a result refused as it is serialized is not kept in the cache of whole results', async () => {
  const { facade } = await servers.start(cacheableEcho(60), { PIM_MAX_REQUEST_BYTES: '4000' });
  const answer = await facade.post(query);
  expect(answer.body?.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  expect(facade.app.responses!.stats().entries).toBe(0);
  // What fits is kept as before.
  expect((await facade.post('{ catalogProducts(catalogId: "C") }')).body?.errors).toBeUndefined();
  expect(facade.app.responses!.stats().entries).toBe(1);
});
