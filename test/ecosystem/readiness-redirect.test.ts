import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const { start } = closedAfterEach();

// docs/operations.md, Readiness: 200 when the PIM answered a probe with any 2xx or 4xx. The façade never follows a
// redirect, so a PIM_BASE_URL that redirects (http:// behind an ingress that moves every request to https://, a proxy
// sending callers to its sign-in page) fails every field with UPSTREAM_ERROR: the replica cannot serve anyone.
it('a PIM that answers every call with a redirect leaves the replica unready', async () => {
  const { facade } = await start((_req, res) => void res.writeHead(301, { location: 'https://pim.example/' }).end(), {
    PIM_CACHE: 'false',
  });
  const field = await facade.post('{ catalogProducts(catalogId: "A") }');
  expect(field.body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  expect((await facade.get('/readiness')).status).toBe(503);
});
