import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const servers = closedAfterEach();

// `/readiness` is public and never refused for load. While the PIM answers in a way readiness takes as no answer (but
// the breaker as one, so it never opens), every check sent a new probe as soon as the last ended: 200 checks, 200
// probes, a stream of 401s on the server's own key. A probe not answered answers the checks of the next second too.
it.each([
  ['the server key refused (401)', faults.status(401, '{"status":401,"meta":{},"error":"bad key"}')],
  ['a maintenance page (200 HTML)', faults.status(200, '<html>down</html>', { 'content-type': 'text/html' })],
  ['a redirect (302)', faults.status(302, '', { location: 'https://elsewhere.example/' })],
])('checks in a row send at most one probe a second: %s', async (_name, handler) => {
  const { facade, upstream } = await servers.start(handler, {
    PIM_API_KEY: 'server-key-1',
    READINESS_MAX_AGE_MS: '30000',
  });
  const started = Date.now();
  for (let i = 0; i < 200; i++) expect((await facade.get('/readiness')).status).toBe(503);
  const seconds = Math.ceil((Date.now() - started) / 1_000);
  expect(upstream.requests.length).toBeGreaterThanOrEqual(1);
  expect(upstream.requests.length).toBeLessThanOrEqual(seconds + 1);
});

// A probe the open breaker refused never reached the PIM: it holds no check back. It held the next second's, so a
// replica whose breaker let its trial through (the PIM back) stayed unready up to a second longer, a whole probe
// period with `periodSeconds: 1`.
it('a probe the open breaker refused holds no check back', async () => {
  const { facade, upstream } = await servers.start(faults.status(503), {
    PIM_RETRIES: '0',
    PIM_BREAKER_THRESHOLD: '1',
    PIM_BREAKER_HALF_OPEN_MS: '300',
  });
  await facade.post('{ catalogProducts(catalogId: "C") }');
  await expect.poll(() => facade.app.upstream.breaker).toBe('open');
  upstream.respond(faults.status(200, '{"status":200,"meta":{},"data":[]}'));
  const opened = performance.now();
  expect((await facade.get('/readiness')).status).toBe(503);
  // Past the half-open delay (the protocol's time), within the second after that refused probe.
  await new Promise((resolve) => setTimeout(resolve, 300 + 100 - (performance.now() - opened)));
  expect((await facade.get('/readiness')).status).toBe(200);
});
