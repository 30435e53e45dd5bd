import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { withHeaders } from './reads.ts';

const servers = closedAfterEach();

// docs/operations.md, Stale answers: "every 2xx answer ... is kept per URL and credential", and a failed call gets
// "the kept answer" — the last good one. src/pim/steps/stale.ts skips keeping a new answer whose production time is
// within a second of the copy held (meant for the HTTP cache replaying the same answer), whatever its body. An answer
// the PIM produced anew with other data (a publish, read right after the previous read) is then never kept: at the
// next outage the client that has already been shown v2 is shown v1 again, as the "last good answer".
/** v1, then v2 answered with `newer` headers (the client is shown it), then a 500: the body of that last read. */
async function shownAfterV2(env: Record<string, string>, first: Record<string, string>, newer: Record<string, string>) {
  const { upstream, facade } = await servers.start(withHeaders('v1', first), {
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1000',
    ...env,
  });
  const ask = async () => (await facade.post('{ p: catalogProducts(catalogId: "PUBLISHED") }')).body;
  expect((await ask()).data.p.data[0].version).toBe('v1');
  // The PIM publishes v2; the next read shows it.
  upstream.respond(withHeaders('v2', newer));
  const fresh = await ask();
  expect(fresh.errors).toBeUndefined();
  expect(fresh.data.p.data[0].version).toBe('v2');
  // The PIM fails.
  upstream.respond(faults.status(500, '{"error":"down"}'));
  return ask();
}

it.each([
  ['without the HTTP cache', { PIM_CACHE: 'false' }, {}],
  ['with answers the PIM says to revalidate (no-cache)', {}, { 'cache-control': 'no-cache' }],
])('%s: the newest good answer is the one that stands in for a failure', async (_name, env, headers) => {
  // The last good answer is v2, not the v1 it replaced.
  const during = await shownAfterV2(env, headers, headers);
  expect(during.extensions?.stale).toHaveLength(1);
  expect(during.data.p.data[0].version).toBe('v2');
});

// stale.ts ends an older kept copy that must not stand in for a newer answer. A newer answer not kept because the PIM
// marked it `no-store`, or `Vary: *`, left the older copy in place: at the next outage the client shown v2 got v1.
it.each([
  ['no-store', { 'cache-control': 'no-store' }],
  ['Vary: *', { vary: '*' }],
])('a newer answer marked %s ends the older copy rather than leaving it to stand in', async (_name, headers) => {
  const during = await shownAfterV2({ PIM_CACHE: 'false' }, {}, headers);
  expect(during.data?.p?.data?.[0]?.version).not.toBe('v1');
});
