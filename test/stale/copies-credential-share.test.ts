import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const servers = closedAfterEach();
const MiB = 2 ** 20;
const A = { 'x-api-key': 'key-of-a-123' };
const B = { 'x-api-key': 'key-of-b-456' };

// Catalogs named BIG* answer about 150,000 characters (some 300 KB of heap as the store counts a copy: about 30% of
// the 1 MiB bound below); every other answer is small.
const handler = (req: IncomingMessage, res: ServerResponse) => {
  const pad = req.url!.includes('/catalogs/BIG') ? 'x'.repeat(150_000) : '';
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url, pad }] }));
};

// The goal: a dependency failing never takes away answers the façade already holds, and every bound holds per request
// and per credential, not only per process. The last-known-good store (src/pim/cache/last-known-good.ts) was one LRU
// for the whole process with no share per credential and no bound per copy (a copy could weigh the whole
// PIM_STALE_MAX_BYTES), unlike the HTTP cache (an entry at most a quarter) and the cache of results (a sixteenth): ONE
// request of another credential, reading a few large pages, pushed out every copy credential B held, and at the next
// outage B got errors where its last good answers stood.
it("one request of credential A does not push out credential B's last-known-good copy", async () => {
  const { facade, upstream } = await servers.start(handler, {
    PIM_STALE_MAX_BYTES: String(MiB),
    PIM_RETRIES: '0',
    PIM_CACHE: 'false',
  });
  // B reads its catalog once: its last good answer is kept.
  expect((await facade.post('{ b: catalogProducts(catalogId: "B1") }', {}, B)).body.errors).toBeUndefined();

  // A single GraphQL request of A: four large pages (well within every per-request limit).
  const big =
    '{ a1: catalogProducts(catalogId: "BIG1") a2: catalogProducts(catalogId: "BIG2") ' +
    'a3: catalogProducts(catalogId: "BIG3") a4: catalogProducts(catalogId: "BIG4") }';
  expect((await facade.post(big, {}, A)).body.errors).toBeUndefined();

  // The PIM fails: B's field should get its last good answer, marked stale.
  upstream.respond(faults.status(500));
  const { body } = await facade.post('{ b: catalogProducts(catalogId: "B1") }', {}, B);
  expect({ errors: body.errors?.map((e: any) => e.extensions.code), stale: body.extensions?.stale?.length }).toEqual({
    errors: undefined,
    stale: 1,
  });
});
