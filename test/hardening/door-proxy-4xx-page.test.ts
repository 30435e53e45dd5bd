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

// docs/operations.md, Resilience: a key counts as its own credential at the door once the PIM has answered one of its
// calls, but not for an answer "which a proxy in front sends whatever the key" (a redirect, a 2xx page). A proxy's 4xx
// page is such an answer too: nginx answers a header line past its 8 KB buffers (the façade takes 16 KB) with
// `400 Request Header Or Cookie Too Large`, an HTML page, before any key is checked. A 404 page of a proxy is already
// taken as no answer of the PIM's (proxy-404.test.ts); a 400 page made each made-up key a credential of its own.
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
  const madeUp = (i: number) => `${i}-${'k'.repeat(9_000)}`;
  for (let i = 0; i < 8; i++) await ask(facade.url, madeUp(i));
  const sockets = await Promise.all(Array.from({ length: 8 }, (_, i) => heldPost(facade.port, madeUp(i))));
  try {
    await sleep(200);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await ask(facade.url, REAL_KEY)).status);
    expect(statuses, 'the real key is refused while made-up keys hold every slot').toEqual([200, 200, 200]);
  } finally {
    for (const socket of sockets) socket.destroy();
  }
});
