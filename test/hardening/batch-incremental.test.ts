import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// Every catalog page is about 100 KB, and a fresh one each call: no cache answers the probe below.
const page = JSON.stringify({ status: 200, meta: {}, data: [{ text: 'x'.repeat(100_000) }] });
const answer = (_req: IncomingMessage, res: ServerResponse) =>
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(page);
const servers = closedAfterEach();

// Yoga answered a deferred operation inside a batch as `{}` (its stream written as JSON), never read the
// stream nor closed it: the deferred fields ran for nobody, and their bytes counted toward
// PIM_MAX_INFLIGHT_BYTES until the client went away, so a few such batches starved every other request.
it('refuses @defer and @stream inside a batch before they run, answers the rest, and holds no bytes after', async () => {
  const { facade, upstream } = await servers.start(answer, {
    GRAPHQL_BATCHING: 'true',
    PIM_MAX_INFLIGHT_BYTES: String(512 * 1024),
    PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: String(512 * 1024),
  });
  const deferred = `query Deferred { ... @defer { a: catalogProducts(catalogId: "A") b: catalogProducts(catalogId: "B") } }`;
  const streamed = `{ _entities(representations: [{ __typename: "Catalog", catalogId: "C" }]) @stream { __typename } }`;
  const plain = `{ d: catalogProducts(catalogId: "D") }`;
  const { status, body } = await facade.postBody([{ query: deferred }, { query: streamed }, { query: plain }]);
  expect(status).toBe(200);
  const refused = {
    errors: [
      {
        message: '@defer and @stream are not served inside a batch; send this operation alone',
        extensions: { code: 'BAD_REQUEST' },
      },
    ],
  };
  expect(body).toEqual([refused, refused, { data: { d: expect.objectContaining({ status: 200 }) } }]);
  // Refused, it is still an operation the metrics (and the log line, and a span) count.
  expect((await facade.app.metrics()).body).toMatch(
    /graphql_operations_total\{operation_type="query",operation_name="Deferred"\} 1/,
  );

  // Four fresh pages (400 KB) fit in the 512 KB the process holds at once: nothing is left counted.
  const probe = `{ ${['E', 'F', 'G', 'H'].map((id) => `${id}: catalogProducts(catalogId: "${id}")`).join(' ')} }`;
  for (let round = 0; round < 3; round++) {
    const answered = await facade.post(probe);
    expect(answered.body.errors).toBeUndefined();
  }
  expect(upstream.requests.length).toBeGreaterThan(0);
  // Refused before it runs: a refusal seen only after executing left its calls going on after the answer,
  // reading bodies into an account the response's end had already closed.
  expect(upstream.requests.filter((r) => /\/catalogs\/[ABC]\//.test(r.url))).toEqual([]);
});
