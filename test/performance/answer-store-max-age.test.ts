import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// docs/integration.md, HTTP caching: "N is the least remaining browser lifetime among the upstream answers (their
// max-age ... less their Age); hits of the façade's own upstream cache count the same, their time in that cache taken
// off". `short` is answered with max-age=10 and no Date: its freshness ends 10 s after the PIM sent it.
const answer = (req: IncomingMessage, res: ServerResponse) => {
  res.sendDate = false;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=10' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

const servers = closedAfterEach();
const until = (at: number) => sleep(Math.max(0, at - Date.now()));
const url = (query: string) => `/graphql?query=${encodeURIComponent(query)}`;
const maxAgeOf = (headers: Headers) => Number(/max-age=(\d+)/.exec(headers.get('cache-control') ?? '')?.[1] ?? -1);

it('a response read from the parsed answers claims no more max-age than the upstream answer has left', async () => {
  // The cache of results off: every response below is executed.
  const { upstream, facade } = await servers.start(answer, { RESPONSE_CACHE_MAX_BYTES: '0' });
  // 1. From the PIM: the HTTP cache keeps it, fresh until sentAt + 10 s.
  expect((await facade.get(url('{ a: catalogProducts(catalogId: "short") }'))).body.errors).toBeUndefined();
  const sentAt = upstream.requests[0]!.at;
  // 2. 1.45 s later, from the HTTP cache (whose Age rounds 1.45 s to 1): the parsed body is kept.
  await until(sentAt + 1_450);
  expect((await facade.get(url('{ b: catalogProducts(catalogId: "short") }'))).body.errors).toBeUndefined();
  // 3. 0.98 s later, from the parsed answers.
  await until(sentAt + 2_430);
  const third = await facade.get(url('{ c: catalogProducts(catalogId: "short") }'));
  const leftS = 10 - (Date.now() - sentAt) / 1000;
  expect(third.body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(1);
  // Whole seconds rounded up, the tolerance test/performance/response-cache-aged.test.ts allows.
  expect(
    maxAgeOf(third.headers),
    `${third.headers.get('cache-control')} with ${leftS.toFixed(2)} s left`,
  ).toBeLessThanOrEqual(Math.ceil(leftS));
}, 20_000);
