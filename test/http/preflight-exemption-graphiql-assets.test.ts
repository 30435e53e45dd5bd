import { expect, it } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';

// 3b867c0 exempts every OPTIONS with Access-Control-Request-Method from HTTP_MAX_IN_FLIGHT, on the grounds that Yoga's
// CORS answers it (204) before any work. Without CORS_ORIGINS (the default) Yoga has no CORS plugin: such a request
// goes through every plugin, and the GraphiQL assets plugin (introspection on, the default outside production) reads
// and sent its 5-7 MB file for any method. Past the bound, the GET of the same file is refused; the "preflight" was not.
// GraphiQL's files now answer GET and HEAD only (test/http/accept-and-methods.test.ts): such an OPTIONS is refused
// with 405 before any work, whatever the load.
const { start } = closedAfterEach();
const asset = '/graphiql-assets/yoga-graphiql.es.js';

it('an OPTIONS "preflight" without CORS configured does not get past HTTP_MAX_IN_FLIGHT to real work', async () => {
  const { facade } = await start(() => undefined, { HTTP_MAX_IN_FLIGHT: '1', PIM_CACHE: 'false' });
  // The one slot, held by a body that never ends.
  const held = await heldPost(facade.port, 'k');
  try {
    await expect.poll(async () => (await facade.request(asset)).status).toBe(503);
    const preflight = await facade.request(asset, {
      method: 'OPTIONS',
      headers: { origin: 'https://anyone.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.text.length).toBeLessThan(10_000);
    expect(preflight.status).toBe(405);
  } finally {
    held.destroy();
  }
});
