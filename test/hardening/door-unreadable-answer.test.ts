import { setTimeout as sleep } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

const REAL_KEY = 'real-key-0001';
const ask = async (url: string, key: string) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query: '{ classificationGroups(classificationId: "real") }' }),
  });
  return { status: response.status, body: (await response.json().catch(() => undefined)) as any };
};

/** The real key's statuses while each made-up key holds a request whose body never ends. */
async function realKeyWhileHeld(facade: { url: string; port: number }, madeUp: string[]) {
  const sockets = await Promise.all(madeUp.map((key) => heldPost(facade.port, key)));
  try {
    await sleep(200);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await ask(facade.url, REAL_KEY)).status);
    return statuses;
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}
const madeUp = Array.from({ length: 8 }, (_, i) => `made-up-${i}`);

// docs/operations.md, Resilience: a key counts as its own credential at the door once the PIM has answered one of
// its calls; Readiness: a 2xx that is not JSON (a maintenance page, a proxy's login page) is no answer, it says the
// PIM cannot serve anyone. Such a page, which a proxy in front of the PIM sends whatever the key, made every made-up
// key that met it a credential of its own: bodies that never end, one made-up key each, then held every slot.
it('a 2xx page that is not JSON does not make a made-up key a credential of its own at the door', async () => {
  const { upstream, facade } = await start(
    (req, res) => {
      if (req.headers['x-api-key'] === REAL_KEY) return faults.ok(req, res);
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Down for maintenance</body></html>');
    },
    { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '0' },
  );
  expect((await ask(facade.url, REAL_KEY)).status).toBe(200);
  // Each made-up key meets the maintenance page once: its field fails, as the PIM cannot serve anyone.
  for (const key of madeUp) {
    const { body } = await ask(facade.url, key);
    expect(body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  }
  expect(upstream.requests.filter((r) => r.headers['x-api-key'] !== REAL_KEY)).toHaveLength(8);
  expect(await realKeyWhileHeld(facade, madeUp)).toEqual([200, 200, 200]);
});

// A proxy's redirect to its sign-in page is no word of the PIM's on the key either.
it('a redirect does not make a made-up key a credential of its own at the door', async () => {
  const { facade } = await start(
    (req, res) => {
      if (req.headers['x-api-key'] === REAL_KEY) return faults.ok(req, res);
      res.writeHead(302, { location: 'https://sso.example/login' }).end();
    },
    { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '0' },
  );
  expect((await ask(facade.url, REAL_KEY)).status).toBe(200);
  for (const key of madeUp) expect((await ask(facade.url, key)).body.errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  expect(await realKeyWhileHeld(facade, madeUp)).toEqual([200, 200, 200]);
});

// A proxy's 4xx page is such an answer too: nginx answers a header line past its 8 KB buffers (the façade takes
// 16 KB) with `400 Request Header Or Cookie Too Large`, an HTML page, before any key is checked. A proxy's 404 page
// was already no answer of the PIM's (proxy-404.test.ts); a 400 page made each made-up key a credential of its own.
it("a proxy's 4xx page (not the PIM's envelope) does not make a made-up key a credential at the door", async () => {
  const { facade } = await start(
    (req, res) => {
      const key = String(req.headers['x-api-key'] ?? '');
      if (key.length > 8_192) {
        return void res
          .writeHead(400, { 'content-type': 'text/html' })
          .end('<html><head><title>400 Request Header Or Cookie Too Large</title></head><body>nginx</body></html>');
      }
      if (key === REAL_KEY) return faults.ok(req, res);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"status":401,"meta":{},"error":"Unauthorized"}');
    },
    { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '0' },
  );
  expect((await ask(facade.url, REAL_KEY)).status).toBe(200);
  const long = madeUp.map((key) => `${key}-${'k'.repeat(9_000)}`);
  for (const key of long) await ask(facade.url, key);
  expect(await realKeyWhileHeld(facade, long), 'the real key is refused while made-up keys hold every slot').toEqual([
    200, 200, 200,
  ]);
});
