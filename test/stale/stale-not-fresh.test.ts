import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

// The HTTP cache holds a fresh 200 the PIM sent that cannot be read (an envelope broken inside its braces), so each
// call it answers fails, and the last-known-good copy stands in, marked stale. The step in front of the HTTP cache
// kept that stand-in as the fresh answer's parsed body: from the next request on it went out as fresh data (no
// `extensions.stale`, the broken entry's max-age to the CDN) for the entry's whole minute.
it('a copy served stale in place of a fresh cached answer that failed is never kept as that answer', async () => {
  const good = '{"status":200,"data":[{"id":"kept"}]}';
  const { upstream, facade } = await servers.start(
    (_req, res, index) =>
      index === 0
        ? res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=0' }).end(good)
        : res
            .writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
            .end('{"status":200,"data":[}'),
    { PIM_RETRIES: '0' },
  );
  const query = '{ classificationGroups(classificationId: "C") }';
  expect((await facade.post(query)).body.errors).toBeUndefined();
  for (let i = 0; i < 4; i++) {
    const { body, headers } = await facade.post(query);
    expect(body.data.classificationGroups.data).toEqual([{ id: 'kept' }]);
    expect(body.extensions?.stale, `request ${i + 2}`).toHaveLength(1);
    expect(headers.get('cache-control')).toMatch(/no-store/);
  }
  expect(upstream.requests.length).toBeGreaterThanOrEqual(2);
});
