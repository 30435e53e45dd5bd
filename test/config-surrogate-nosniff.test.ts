import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { closedAfterEach } from './helpers/facade.ts';
import type { UpstreamHandler } from './helpers/upstream.ts';

const servers = closedAfterEach();

const pim: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

// docs/configuration.md, SURROGATE_KEY_HEADER: "one of its own: a header HTTP, the server or a proxy already gives a
// meaning ... is refused at start". The server writes `X-Content-Type-Options: nosniff` on every answer (src/yoga.ts,
// test/http/nosniff.test.ts), yet SURROGATE_KEY_HEADER=X-Content-Type-Options starts: every cacheable answer then says
// `X-Content-Type-Options: catalog:MASTER classification:ETIM-9, nosniff`, whose first value is not `nosniff`, so a
// browser sniffs (Fetch, "determine nosniff") and a CDN purging by tag gets a `nosniff` tag on every answer.
it('SURROGATE_KEY_HEADER=X-Content-Type-Options is refused at start, or leaves nosniff intact', async () => {
  const env = { SURROGATE_KEY_HEADER: 'X-Content-Type-Options' };
  let refused: unknown;
  try {
    loadConfig({ PIM_BASE_URL: 'http://base.example', ...env });
  } catch (error) {
    refused = error;
  }
  if (refused !== undefined) {
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as Error).message).toMatch(/^Invalid SURROGATE_KEY_HEADER=/);
    return;
  }
  const { facade } = await servers.start(pim, env);
  const query = '{ p: catalogProducts(catalogId: "MASTER", classificationId: "ETIM-9") }';
  const answer = await facade.get(`/graphql?query=${encodeURIComponent(query)}`);
  expect(answer.status).toBe(200);
  expect(answer.headers.get('cache-control')).toMatch(/^public/);
  expect(answer.headers.get('x-content-type-options'), 'a cacheable answer').toBe('nosniff');
});
