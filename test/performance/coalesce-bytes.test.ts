import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// `big` answers 15 KB at once; `shared` answers 8 KB after 300 ms. No caching headers: every read reaches the PIM.
function answer(req: IncomingMessage, res: ServerResponse) {
  const big = req.url!.includes('/catalogs/big/');
  const send = () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 200, meta: {}, data: [{ pad: 'x'.repeat(big ? 15_000 : 8_000) }] }));
  };
  if (big) return send();
  const timer = setTimeout(send, 300);
  res.once('close', () => clearTimeout(timer));
}

const servers = closedAfterEach();

// Callers without a key all use the server's: one credential, many people. A shared call reads its body into the
// first request's byte account, so that request's other reads decided whether everyone who joined it failed.
it("a shared call refused by the first request's byte account is read again for a request that joined it", async () => {
  const { facade, upstream } = await servers.start(answer, {
    PIM_API_KEY: 'server-key-0123456789',
    PIM_MAX_REQUEST_BYTES: '20000',
  });
  const victim = '{ catalogProducts(catalogId: "shared") }';
  const alone = await facade.post(victim);
  expect(alone.body.errors).toBeUndefined();
  upstream.reset();
  // 15 KB read, then the shared page (8 KB): past this request's 20,000 bytes, whoever else reads the page.
  const greedy = facade.post('{ big: catalogProducts(catalogId: "big") shared: catalogProducts(catalogId: "shared") }');
  await sleep(100);
  const joined = await facade.post(victim);
  expect((await greedy).body.errors).toEqual([expect.objectContaining({ path: ['shared'] })]);
  expect(joined.body).toEqual(alone.body);
  // The shared call, then the joiner's own.
  expect(upstream.requests.filter((r) => r.url.includes('/shared/'))).toHaveLength(2);
});

// A page too large for any request is no reason to read it again for each request that joined the call, whether the
// PIM declares its length or sends it in chunks.
it.each([
  ['with its length declared', false],
  ['in chunks', true],
])('reads a page too large for every request once, sent %s', async (_name, chunked) => {
  const { facade, upstream } = await servers.start(
    (_req, res) => {
      const timer = setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const body = JSON.stringify({ status: 200, meta: {}, data: [{ pad: 'x'.repeat(25_000) }] });
        if (!chunked) return void res.end(body);
        res.write(body.slice(0, 12_000));
        setTimeout(() => res.end(body.slice(12_000)), 20);
      }, 300);
      res.once('close', () => clearTimeout(timer));
    },
    { PIM_API_KEY: 'server-key-0123456789', PIM_MAX_REQUEST_BYTES: '20000' },
  );
  const query = '{ catalogProducts(catalogId: "huge") }';
  const answers = await Promise.all(Array.from({ length: 20 }, () => facade.post(query)));
  for (const { body } of answers) expect(body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_TOO_LARGE');
  expect(upstream.requests.filter((r) => r.url.includes('/huge/'))).toHaveLength(1);
});
