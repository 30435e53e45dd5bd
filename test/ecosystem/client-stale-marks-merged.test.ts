import { Client, fetchExchange } from '@urql/core';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// urql, with its defaults (GET, its own Accept), as docs/integration.md recommends it for @defer. It merges each part of
// a streamed answer into one result, `extensions` shallowly (`{ ...previous.extensions, ...part.extensions }`): what
// a client reads is the merged result. Both fields here are answered from last-known-good: the merged result must
// still say that both are stale, not only the field of the last part that listed one.
it('urql: the merged result of a @defer answer lists every stale field, the initial part’s too', async () => {
  let failing = false;
  const handler: UpstreamHandler = (req, res) => (failing ? void res.writeHead(500).end() : echo(req, res));
  const { facade } = await servers.start(handler, { PIM_RETRIES: '0', PIM_CACHE: 'false' });
  // Both answers kept as last good ones.
  const primed = await facade.post('{ a: catalogProducts(catalogId: "A") b: catalogProducts(catalogId: "B") }');
  expect(primed.body.errors).toBeUndefined();
  failing = true;

  const client = new Client({ url: facade.url, exchanges: [fetchExchange] });
  const query = '{ a: catalogProducts(catalogId: "A") ... @defer { b: catalogProducts(catalogId: "B") } }';
  const results: Array<{ data: any; extensions: any; hasNext: boolean }> = [];
  await new Promise<void>((resolve, reject) => {
    const { unsubscribe } = client.query(query, {}, { requestPolicy: 'network-only' }).subscribe((result) => {
      if (result.error) return void (unsubscribe(), reject(result.error));
      results.push({ data: result.data, extensions: result.extensions, hasNext: Boolean(result.hasNext) });
      if (!result.hasNext) resolve();
    });
  });
  const last = results.at(-1)!;
  // Both fields arrived, both from the kept copies.
  expect(last.data.a.data[0].url).toContain('/A/');
  expect(last.data.b.data[0].url).toContain('/B/');
  // On the wire each part lists the stale fields it delivers; the client's merged result lost the initial part's.
  const paths = (last.extensions?.stale ?? []).map((field: { path: string[] }) => field.path.join('.')).sort();
  expect(paths).toEqual(['a', 'b']);
});
