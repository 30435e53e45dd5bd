import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// 1af9bc3 made a 2xx whose envelope says 500-599 (or 429) that status's error. The HTTP cache stores the 2xx all the
// same (cache.ts keeps any 2xx; a real 5xx or 429 it never keeps: "replayed, it would outlast the outage and count as
// a fault of an upstream never called"). Every later call within the max-age was answered with the error from the
// cache, without asking the PIM, which had long recovered.
const servers = closedAfterEach();
const json = { 'content-type': 'application/json', 'cache-control': 'max-age=60' };

it.each([
  [503, 'UPSTREAM_ERROR'],
  [500, 'UPSTREAM_ERROR'],
  [429, 'UPSTREAM_RATE_LIMITED'],
])(
  'a 2xx carrying a %i envelope (max-age=60) is not replayed from the HTTP cache once the PIM recovers',
  async (status, code) => {
    let down = true;
    const handler: UpstreamHandler = (req, res) => {
      const body = down
        ? { status, meta: { languageId: null }, error: 'maintenance' }
        : { status: 200, meta: { languageId: null }, data: [{ url: req.url }] };
      res.writeHead(200, json).end(JSON.stringify(body));
    };
    const { facade, upstream } = await servers.start(handler, {
      PIM_RETRIES: '0',
      PIM_STALE_IF_ERROR_MS: '0',
      PIM_BREAKER_THRESHOLD: '1000',
    });
    const query = '{ classificationGroups(classificationId: "E") }';
    const first = (await facade.post(query)).body;
    expect(first.errors?.[0]?.extensions?.code).toBe(code);

    down = false;
    const second = (await facade.post(query)).body;
    // The PIM is asked again and its answer served.
    expect(upstream.requests).toHaveLength(2);
    expect(second.errors).toBeUndefined();
    expect(second.data.classificationGroups.data).toHaveLength(1);
  },
);

it('a real 5xx with the same max-age is asked again (the baseline the envelope must match)', async () => {
  let down = true;
  const handler: UpstreamHandler = (req, res) => {
    if (down) return void res.writeHead(503, json).end(JSON.stringify({ status: 503, meta: {}, error: 'x' }));
    res.writeHead(200, json).end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
  };
  const { facade, upstream } = await servers.start(handler, { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' });
  const query = '{ classificationGroups(classificationId: "E") }';
  expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  down = false;
  expect((await facade.post(query)).body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(2);
});
