// @module-tag redis-server
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';
import { answerFor, operations } from './reads.ts';
import { expectNoStandIn, page, withRefusingRedis } from './refusing-redis.ts';

const servers = closedAfterEach();
const caller = { 'x-api-key': 'key-of-b-456' };
const gone = '{ p: catalogProducts(catalogId: "GONE") }';
const grown = '{ p: catalogProducts(catalogId: "GROWN") }';

// docs/operations.md, Stale answers: "a 401, 403, 404 or 410 also ends the kept copy of that URL and credential
// (here and in Redis), so a revoked key or a deleted group gets no older answer at the next outage". When Redis
// cannot take the delete (a failover demoted it: READONLY; a partition: timed out), the copy in Redis lived on, and
// at the next outage the same façade found it there and served the deleted catalog's data, marked stale.
it.each([
  ['404 (a deleted catalog)', 404, 'NOT_FOUND'],
  ['401 (a revoked key)', 401, 'UNAUTHENTICATED'],
])(
  'a %s heard while Redis refused writes still ends the kept copy at the next outage',
  async (_name, status, code) => {
    const { upstream, facade, refuse, accept, kept } = await withRefusingRedis(servers, answerFor('v1'));
    const ask = async () => (await facade.post(gone, {}, caller)).body;
    expect((await ask()).data.p.data[0].version).toBe('v1');
    await expect.poll(kept).toContain('"v1"');

    await refuse();
    upstream.respond(faults.status(status, '{"error":"gone"}'));
    const verdict = await ask();
    expect(verdict.errors[0].extensions.code).toBe(code);
    expect(verdict.extensions?.stale).toBeUndefined();
    await accept();

    upstream.respond(faults.status(500, '{"error":"down"}'));
    expectNoStandIn(await ask());
  },
  20_000,
);

// The time of a refused verdict was set only when the key had none: a copy kept after a first refused verdict, then
// ended by a second one while Redis refused again, was newer than the mark and came back at the next outage.
it('a second verdict refused by Redis ends the copy kept since the first', async () => {
  const { upstream, facade, refuse, accept, kept } = await withRefusingRedis(servers, answerFor('v1'));
  const ask = async () => (await facade.post(gone, {}, caller)).body;
  expect((await ask()).data.p.data[0].version).toBe('v1');
  await expect.poll(kept).toContain('"v1"');

  await refuse();
  upstream.respond(faults.status(404, '{"error":"gone"}'));
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  const firstVerdict = Date.now();
  await accept();

  // The catalog is back (a later millisecond): a newer copy, kept in Redis.
  await expect.poll(() => Date.now()).toBeGreaterThan(firstVerdict);
  upstream.respond(answerFor('v2'));
  expect((await ask()).data.p.data[0].version).toBe('v2');
  await expect.poll(kept).toContain('"v2"');

  await refuse();
  upstream.respond(faults.status(404, '{"error":"gone"}'));
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  await accept();
  expect(await kept()).toContain('"v2"');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  expectNoStandIn(await ask());
}, 20_000);

// Every store Redis refuses leaves a mark too (the next test): while Redis refuses writes, each ordinary answer kept
// added one beside the verdicts', and a few hundred reads pushed the verdict's mark out of their shared bound.
it('ordinary answers kept while Redis refuses do not push out the mark of a verdict it refused', async () => {
  const { upstream, facade, redis, refuse, accept } = await withRefusingRedis(servers, answerFor('v1'), {
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
  });
  const ask = async () => (await facade.post(gone, {}, caller)).body;
  const storedGone = async () => {
    for (const key of await redis.client.keys('pim-graphql:lkg:*')) {
      const value = await redis.client.get(key);
      if (value?.includes('GONE')) return value;
    }
    return null;
  };
  expect((await ask()).data.p.data[0].version).toBe('v1');
  await expect.poll(storedGone).toContain('"v1"');

  await refuse();
  const verdict = faults.status(404, '{"error":"gone"}');
  const live = answerFor('v1');
  upstream.respond((req, res) => (req.url!.includes('GONE') ? verdict(req, res) : live(req, res)));
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  for (const operation of operations(0, 600)) {
    expect((await facade.post(operation, {}, caller)).body.errors).toBeUndefined();
  }
  await accept();
  expect(await storedGone()).toContain('"v1"');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  expectNoStandIn(await ask());
}, 60_000);

// "A newer answer too big to keep ends the older copy in memory and in Redis": in Redis that is the store script's
// work, so when Redis refused the store the older copy stayed there, memory no longer had the newer one, and the next
// outage served the older answer to the client that was shown the newer one.
it('a newer answer too big for memory, whose store Redis refused, does not leave the older copy to stand in', async () => {
  const { upstream, facade, refuse, accept, copies, refusedAStore } = await withRefusingRedis(servers, page('v1'), {
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
  });
  expect((await facade.post(grown)).body.data.p.data[0].version).toBe('v1');
  await expect.poll(async () => (await copies()).length).toBe(1);

  await refuse();
  // 600 KB of text weighs 1.2 MB in memory: past the 1 MiB bound; Redis refuses the write.
  upstream.respond(page('v2', 600_000));
  expect((await facade.post(grown)).body.data.p.data[0].version).toBe('v2');
  await refusedAStore();
  await accept();

  upstream.respond(faults.status(500, '{"error":"down"}'));
  expect((await facade.post(grown)).body.data?.p?.data?.[0]?.version).not.toBe('v1');
}, 20_000);

// That mark must not hide the newer answer itself: the same answer asked again once Redis is back (another edge, a
// larger Age, so an earlier production time as estimated) is what Redis then holds, and was deleted as ended.
it('the newer answer, stored in Redis once it is back, is served at the next outage', async () => {
  const { upstream, facade, refuse, accept, kept, refusedAStore } = await withRefusingRedis(servers, page('v1'), {
    PIM_STALE_MAX_BYTES: '1048576',
    PIM_CACHE: 'false',
  });
  expect((await facade.post(grown)).body.data.p.data[0].version).toBe('v1');
  await expect.poll(kept).toContain('"v1"');

  await refuse();
  upstream.respond(page('v2', 600_000, '0'));
  expect((await facade.post(grown)).body.data.p.data[0].version).toBe('v2');
  await refusedAStore();
  await accept();

  upstream.respond(page('v2', 600_000, '5'));
  expect((await facade.post(grown)).body.data.p.data[0].version).toBe('v2');
  await expect.poll(kept).toContain('"v2"');

  upstream.respond(faults.status(500, '{"error":"down"}'));
  const during = (await facade.post(grown)).body;
  expect(during.errors).toBeUndefined();
  expect(during.extensions?.stale).toBeDefined();
  expect(during.data.p.data[0].version).toBe('v2');
}, 20_000);
