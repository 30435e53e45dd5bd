import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

// UPSTREAM.md: the PIM's error answer is its envelope `{ "status": 404, "meta": {...}, "error": "No Products found" }`,
// the envelope's `status` carrying the outcome. A deployment (or the gateway in front of it) that sends that error
// envelope under HTTP 200 must not have it handed to clients as the field's data, with no error and no code: a
// frontend then reads `data.catalogProducts.data` of an error body (src/types/catalog.ts's catalogResult throws a
// TypeError for it), and the façade keeps and caches it as a good answer.
const servers = closedAfterEach();
const env = { PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' };
const json = { 'content-type': 'application/json' };

it('a 2xx carrying the 404 error envelope is NOT_FOUND, as the same envelope under HTTP 404 is', async () => {
  const notFound = JSON.stringify({ status: 404, meta: { languageId: null }, error: 'No Products found' });
  const { facade, upstream } = await servers.start((_req, res) => res.writeHead(200, json).end(notFound), env);
  const { body } = await facade.post('{ catalogProducts(catalogId: "C") }');
  expect(upstream.requests).toHaveLength(1);
  expect(body.data).toEqual({ catalogProducts: null });
  expect(body.errors?.[0]).toMatchObject({
    message: 'No Products found: catalogId "C"',
    extensions: { code: 'NOT_FOUND', upstream: { status: 404 } },
  });
});

it.each([
  [400, 'UPSTREAM_BAD_REQUEST'],
  [401, 'UNAUTHENTICATED'],
  [500, 'UPSTREAM_ERROR'],
])('a 2xx carrying an error envelope with status %i fails with %s', async (status, code) => {
  const error = JSON.stringify({ status, meta: { languageId: null }, error: 'refused' });
  const { facade } = await servers.start((_req, res) => res.writeHead(200, json).end(error), env);
  const { body } = await facade.post('{ classificationGroups(classificationId: "E") }');
  expect(body.data).toEqual({ classificationGroups: null });
  expect(body.errors?.[0]?.extensions?.code).toBe(code);
});

it('a 2xx envelope whose status is 200 (or absent) is still passed through unchanged', async () => {
  const ok = JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ classificationGroupId: 'G' }] });
  const { facade } = await servers.start((_req, res) => res.writeHead(200, json).end(ok), env);
  const { body } = await facade.post('{ classificationGroups(classificationId: "E") }');
  expect(body).toEqual({ data: { classificationGroups: JSON.parse(ok) } });
});
