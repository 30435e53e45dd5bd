// @module-tag redis-server
import { expect, it } from 'vitest';
import { useRedisFleet } from '../helpers/redis-fleet.ts';
import { startUpstream } from '../helpers/upstream.ts';
import { purge } from './reads.ts';

// 34cdd33 / 4730fab: a slow read sent before a purge neither replaces nor ends the kept copy read after the purge, but
// only when this replica read that copy (store.peek: its memory). Another replica's copy, in the shared Redis, is
// replaced by the older answer (or deleted by one that may not be kept): at the next outage a replica without a copy
// of its own serves v1 (or an error) to clients the fleet already showed v2.
const TOKEN = 'a-long-enough-admin-token';
let mode: 'v1-slow' | 'v2' | 'down' = 'v1-slow';
let v1Headers: Record<string, string> = {};
const fleet = useRedisFleet({
  replicas: 3,
  upstream: () =>
    startUpstream((_req, res) => {
      if (mode === 'down') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
      const version = mode === 'v1-slow' ? 'v1' : 'v2';
      const send = () => {
        const headers = version === 'v1' ? v1Headers : { 'cache-control': 'max-age=0' };
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify({ status: 200, meta: {}, data: [{ version }] }));
      };
      if (version === 'v1') setTimeout(send, 800);
      else send();
    }),
  env: { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', CACHE_ADMIN_TOKEN: TOKEN },
});

it.each([
  ['kept', 'MASTER1', { 'cache-control': 'max-age=0' }],
  ['no-store', 'MASTER2', { 'cache-control': 'no-store' }],
])(
  'a slow %s read on replica A from before a purge leaves the copy replica B read after it',
  async (_n, id, headers) => {
    const [a, b, c] = fleet.replicas as [
      (typeof fleet.replicas)[0],
      (typeof fleet.replicas)[0],
      (typeof fleet.replicas)[0],
    ];
    mode = 'v1-slow';
    v1Headers = headers;
    const query = `{ p: catalogProducts(catalogId: "${id}") }`;
    const slow = a.post(query);
    await new Promise((r) => setTimeout(r, 200));
    mode = 'v2';
    expect(await purge(a.origin, TOKEN, { catalogId: id })).toBeLessThan(300);
    const fresh = (await b.post(query)).body;
    expect(fresh.data.p.data[0].version, JSON.stringify(fresh)).toBe('v2');
    expect((await slow).body.data.p.data[0].version).toBe('v1');
    await new Promise((r) => setTimeout(r, 300));
    mode = 'down';
    const during = (await c.post(query)).body;
    expect(during.extensions?.stale, `no kept copy for replica C: ${JSON.stringify(during)}`).toHaveLength(1);
    expect(during.data.p.data[0].version, 'the copy the fleet kept').toBe('v2');
  },
);
