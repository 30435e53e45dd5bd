import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

const servers = closedAfterEach();

const pim: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

// docs/integration.md: `SURROGATE_KEY_HEADER=Cache-Tag` for Cloudflare. Cloudflare (and CloudFront, Akamai) read that
// header as a comma-separated list and remove its whitespace: `catalog:MASTER classification:ETIM-9` was one tag,
// `catalog:MASTERclassification:ETIM-9`, which the purge of `catalog:MASTER` the docs show never reaches.
it('names each tag apart in a Cache-Tag header, as Cloudflare reads it: separated by commas', async () => {
  const { facade } = await servers.start(pim, {
    SURROGATE_KEY_HEADER: 'Cache-Tag',
    RESPONSE_CACHE_MAX_BYTES: '1048576',
  });
  const query = '{ p: catalogProducts(catalogId: "MASTER", classificationId: "ETIM-9") }';
  const url = `/graphql?query=${encodeURIComponent(query)}`;
  // Executed, then answered from the cache of results.
  for (let i = 0; i < 2; i++) {
    const answer = await facade.get(url);
    expect(answer.headers.get('cache-control')).toMatch(/^public/);
    expect(answer.headers.get('cache-tag')).toBe('catalog:MASTER,classification:ETIM-9');
  }
});

it('keeps Surrogate-Key (Fastly) and xkey (Varnish) separated by spaces', async () => {
  for (const header of ['Surrogate-Key', 'xkey']) {
    const { facade } = await servers.start(pim, { SURROGATE_KEY_HEADER: header });
    const query = '{ p: catalogProducts(catalogId: "MASTER", classificationId: "ETIM-9") }';
    const answer = await facade.get(`/graphql?query=${encodeURIComponent(query)}`);
    expect(answer.headers.get(header)).toBe('catalog:MASTER classification:ETIM-9');
  }
});
