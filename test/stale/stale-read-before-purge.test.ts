import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { purge } from './reads.ts';

const servers = closedAfterEach();

// docs/operations.md: a failed call gets "the kept answer" — the last good one. A read sent before a purge that comes
// back after a read sent after it (the PIM slow for the first) replaced the newer copy: at the next outage the client
// already shown v2 (after the publish and its purge) was shown v1.
it.each([
  ['without the HTTP cache', { PIM_CACHE: 'false' }],
  ['with the HTTP cache', {}],
])('%s: a slow read from before a purge does not replace the copy read after it', async (_name, env) => {
  let mode: 'v1-slow' | 'v2' | 'down' = 'v1-slow';
  const { facade } = await servers.start(
    (req, res) => {
      if (mode === 'down') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
      const version = mode === 'v1-slow' ? 'v1' : 'v2';
      const send = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' });
        res.end(JSON.stringify({ status: 200, meta: {}, data: [{ version }] }));
      };
      if (version === 'v1') setTimeout(send, 800);
      else send();
    },
    { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', CACHE_ADMIN_TOKEN: 'secret-token-123', ...env },
  );
  const ask = async (alias: string) => (await facade.post(`{ ${alias}: catalogProducts(catalogId: "MASTER") }`)).body;
  const slow = ask('a');
  await new Promise((r) => setTimeout(r, 200));
  // The PIM publishes v2; the catalog is purged, and the next read shows v2 while the first is still out.
  mode = 'v2';
  expect(await purge(facade.origin, 'secret-token-123', { catalogId: 'MASTER' })).toBeLessThan(300);
  const fresh = await ask('b');
  expect(fresh.data.b.data[0].version, JSON.stringify(fresh)).toBe('v2');
  expect((await slow).data.a.data[0].version).toBe('v1');
  // The PIM fails: the last good answer is v2.
  mode = 'down';
  const during = await ask('c');
  expect(during.extensions?.stale, JSON.stringify(during)).toHaveLength(1);
  expect(during.data.c.data[0].version, 'the read sent before the purge replaced the newer copy').toBe('v2');
});
