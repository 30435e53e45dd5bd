import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { purge } from './reads.ts';

const servers = closedAfterEach();

// docs/operations.md: a failed call gets "the kept answer", the last good one. A read sent before a purge that comes
// back after a read sent after it (the PIM slow for the first) replaced the newer copy, or ended it when its answer
// may not be kept (`no-store`, `Vary: *`) or was a verdict (404, 410: the product not yet published when it was
// sent): at the next outage the client already shown v2 (after the publish and its purge) was shown v1, or an error.
const page = (
  res: ServerResponse,
  version: string,
  headers: Record<string, string> = { 'cache-control': 'max-age=60' },
) =>
  res
    .writeHead(200, { 'content-type': 'application/json', ...headers })
    .end(JSON.stringify({ status: 200, meta: {}, data: [{ version }] }));
const verdict = (status: number) => (res: ServerResponse) =>
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ status, meta: {}, error: { message: 'not found' } }));
it.each([
  ['v1, without the HTTP cache', (res: ServerResponse) => page(res, 'v1'), { PIM_CACHE: 'false' }],
  ['v1, with the HTTP cache', (res: ServerResponse) => page(res, 'v1'), {}],
  ['a no-store v1', (res: ServerResponse) => page(res, 'v1', { 'cache-control': 'no-store' }), {}],
  ['a Vary: * v1', (res: ServerResponse) => page(res, 'v1', { 'cache-control': 'max-age=60', vary: '*' }), {}],
  ['a 404', verdict(404), {}],
  ['a 410', verdict(410), {}],
])('a slow read from before a purge answered with %s leaves the copy read after it', async (_name, slow, env) => {
  let mode: 'v1-slow' | 'v2' | 'down' = 'v1-slow';
  const { facade } = await servers.start(
    (_req, res) => {
      if (mode === 'down') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
      if (mode === 'v1-slow') return void setTimeout(() => slow(res), 800);
      page(res, 'v2');
    },
    { PIM_RETRIES: '0', PIM_BREAKER_THRESHOLD: '1000', CACHE_ADMIN_TOKEN: 'secret-token-123', ...env },
  );
  const ask = async (alias: string) => (await facade.post(`{ ${alias}: catalogProducts(catalogId: "MASTER") }`)).body;
  const first = ask('a');
  await new Promise((r) => setTimeout(r, 200));
  // The PIM publishes v2; the catalog is purged, and the next read shows v2 while the first is still out.
  mode = 'v2';
  expect(await purge(facade.origin, 'secret-token-123', { catalogId: 'MASTER' })).toBeLessThan(300);
  const fresh = await ask('b');
  expect(fresh.data.b.data[0].version, JSON.stringify(fresh)).toBe('v2');
  const old = await first;
  expect(old.data.a?.data[0].version ?? old.errors?.length, JSON.stringify(old)).toBeOneOf(['v1', 1]);
  // The PIM fails: the last good answer is v2. With the HTTP cache, v2 may also still be there, fresh (max-age=60):
  // whether the late v1's write or its delete lands first decides, and either way v2 is what is served, not stale then.
  mode = 'down';
  const during = await ask('c');
  expect(
    during.errors,
    `the read sent before the purge ended the newer copy: ${JSON.stringify(during)}`,
  ).toBeUndefined();
  expect(during.data.c.data[0].version, 'the read sent before the purge replaced the newer copy').toBe('v2');
  if ('PIM_CACHE' in env) expect(during.extensions?.stale, JSON.stringify(during)).toHaveLength(1);
});
