// @module-tag redis-server
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { answerFor, withHeaders } from './reads.ts';
import { expectNoStandIn, withRefusingRedis } from '../stale/refusing-redis.ts';

const servers = closedAfterEach();
const caller = { 'x-api-key': 'key-of-b-456' };
const gone = '{ p: catalogProducts(catalogId: "GONE") }';

// docs/operations.md: "a 401, 403, 404 or 410 also ends the kept copy of that URL and credential (here and in Redis),
// so a revoked key or a deleted group gets no older answer at the next outage". last-known-good.ts keeps the marks of
// verdicts Redis refused apart from the answers', "so that the answers kept while Redis refuses writes (every one)
// never push a verdict's out". A newer `no-store` answer now ends the older copy too (stale.ts), through the verdicts'
// forget: while Redis refuses writes, every `no-store` answer (any URL) leaves a verdict's mark, and pushes the real
// verdict's out: the deleted catalog's copy came back at the next outage.
it('no-store answers read while Redis refuses writes do not push out a refused verdict', async () => {
  let gonePage: (req: IncomingMessage, res: ServerResponse) => void = answerFor('v1');
  const noStore = withHeaders('other', { 'cache-control': 'no-store' });
  const { facade, refuse, accept, kept } = await withRefusingRedis(
    servers,
    (req, res) => (req.url!.includes('GONE') ? gonePage(req, res) : noStore(req, res)),
    {
      PIM_STALE_MAX_BYTES: String(1024 * 1024),
      GRAPHQL_MAX_ALIASES: '1000',
      GRAPHQL_MAX_TOKENS: '100000',
      GRAPHQL_MAX_COST: '10000000',
      PIM_MAX_CALLS_PER_REQUEST: '1000',
    },
  );
  const ask = async () => (await facade.post(gone, {}, caller)).body;
  expect((await ask()).data.p.data[0].version).toBe('v1');
  await expect.poll(kept).toContain('"v1"');

  await refuse();
  gonePage = (_req, res) => void res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"gone"}');
  expect((await ask()).errors[0].extensions.code).toBe('NOT_FOUND');
  // Other pages, each answered `no-store`, read while Redis still refuses writes.
  for (let batch = 0; batch < 4; batch++) {
    const fields = Array.from({ length: 500 }, (_, i) => `f${i}: catalogProducts(catalogId: "O-${batch}-${i}")`);
    const answer = await facade.post(`{ ${fields.join(' ')} }`, {}, caller);
    expect(answer.body.errors, JSON.stringify(answer.body.errors?.[0])).toBeUndefined();
  }
  await accept();

  gonePage = (_req, res) => void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"down"}');
  expectNoStandIn(await ask());
}, 60_000);
