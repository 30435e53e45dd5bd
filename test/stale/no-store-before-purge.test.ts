import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { purge } from './reads.ts';

const servers = closedAfterEach();

// 34cdd33 (stale.ts keep()): "a read sent before a purge no longer replaces the copy read after it". An older read
// that may not be kept (`no-store`, `Vary: *`) still ended that newer copy: it returned (forget) before the check, so
// at the next outage the client already shown v2 (after the publish and its purge) got an error, no kept answer.
it.each([
  ['no-store', { 'cache-control': 'no-store' }],
  ['Vary: *', { 'cache-control': 'max-age=60', vary: '*' }],
])('a slow %s read from before a purge does not end the copy read after it', async (_name, v1Headers) => {
  let mode: 'v1-slow' | 'v2' | 'down' = 'v1-slow';
  const { facade } = await servers.start(
    (req, res) => {
      if (mode === 'down') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
      const version = mode === 'v1-slow' ? 'v1' : 'v2';
      const send = () => {
        const headers = version === 'v1' ? v1Headers : { 'cache-control': 'max-age=60' };
        res.writeHead(200, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify({ status: 200, meta: {}, data: [{ version }] }));
      };
      if (version === 'v1') setTimeout(send, 800);
      else send();
    },
    { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', CACHE_ADMIN_TOKEN: 'secret-token-123' },
  );
  const ask = async (alias: string) => (await facade.post(`{ ${alias}: catalogProducts(catalogId: "MASTER") }`)).body;
  const slow = ask('a');
  await new Promise((r) => setTimeout(r, 200));
  mode = 'v2';
  expect(await purge(facade.origin, 'secret-token-123', { catalogId: 'MASTER' })).toBeLessThan(300);
  const fresh = await ask('b');
  expect(fresh.data.b.data[0].version, JSON.stringify(fresh)).toBe('v2');
  expect((await slow).data.a.data[0].version).toBe('v1');
  mode = 'down';
  const during = await ask('c');
  expect(
    during.extensions?.stale,
    `the read sent before the purge ended the newer copy: ${JSON.stringify(during)}`,
  ).toHaveLength(1);
  expect(during.data.c.data[0].version).toBe('v2');
});
