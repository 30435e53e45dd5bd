import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

const { start } = closedAfterEach();

const askWithRealKey = async (url: string, classificationId = 'real') =>
  (
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'real-key-0001' },
      body: JSON.stringify({ query: `{ classificationGroups(classificationId: "${classificationId}") }` }),
    })
  ).status;

/** Runs `then` while six requests with made-up keys hold bodies that never end (three quarters of 8 slots). */
async function whileMadeUpKeysHold<T>(port: number, then: () => Promise<T>): Promise<T> {
  const sockets = await Promise.all(Array.from({ length: 6 }, (_, i) => heldPost(port, `made-up-${i}`)));
  try {
    await sleep(200);
    return await then();
  } finally {
    for (const socket of sockets) socket.destroy();
  }
}

// The door counts a request from its head, by the key it names, which nobody has checked yet: each made-up key was a
// credential of its own, so bodies that never end, one key each, held every slot until HTTP_REQUEST_TIMEOUT_MS.
describe('HTTP_MAX_IN_FLIGHT_PER_CREDENTIAL leaves room for real credentials', () => {
  it.each([
    ['one key', (_: number) => 'attacker-key'],
    ['made-up keys, one per connection', (i: number) => `made-up-${i}`],
  ])('8 held requests under %s', async (_name, keyOf) => {
    const { upstream, facade } = await start(faults.ok, { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false' });
    // The real key has been answered by the PIM before: it is known to be one.
    expect(await askWithRealKey(facade.url)).toBe(200);
    const sockets = await Promise.all(Array.from({ length: 8 }, (_, i) => heldPost(facade.port, keyOf(i))));
    try {
      await sleep(200);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push(await askWithRealKey(facade.url));
      // None of the held requests ever reached the PIM: nothing was authenticated, nothing refused.
      expect(upstream.requests.filter((r) => r.headers['x-api-key'] !== 'real-key-0001')).toHaveLength(0);
      expect(statuses).toEqual([200, 200, 200]);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  // The server's key (PIM_API_KEY) is the operator's: callers without a key have their share from the start.
  it("keeps the keyless callers' share on the server key from the start", async () => {
    const { facade } = await start(faults.ok, {
      HTTP_MAX_IN_FLIGHT: '8',
      PIM_CACHE: 'false',
      PIM_API_KEY: 'server-key-0123456789',
    });
    const keyless = await whileMadeUpKeysHold(facade.port, () =>
      facade.post('{ classificationGroups(classificationId: "real") }'),
    );
    expect(keyless.status).toBe(200);
  });

  // A key the PIM accepted, then refused (revoked, leaked): no longer a credential of its own at the door.
  it('counts a key the PIM has since refused with the keys never seen accepted', async () => {
    let revoked = false;
    const { facade } = await start(
      (req, res) => {
        if (revoked && req.headers['x-api-key'] === 'real-key-0001')
          return void res.writeHead(401).end('{"status":401,"error":"revoked"}');
        faults.ok(req, res);
      },
      { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '0' },
    );
    expect(await askWithRealKey(facade.url)).toBe(200);
    revoked = true;
    expect(await askWithRealKey(facade.url)).toBe(200); // the PIM's 401, as a GraphQL error
    // The made-up keys hold the share of keys not seen accepted, which the revoked key is now one of.
    expect(await whileMadeUpKeysHold(facade.port, () => askWithRealKey(facade.url))).toBe(503);
  });

  // A 403 may be about one resource the key may not read: the key stays a credential of its own.
  it('keeps the share of a key the PIM forbids one resource', async () => {
    const { facade } = await start(
      (req, res) =>
        req.url?.includes('/forbidden/')
          ? void res.writeHead(403).end('{"status":403,"error":"not yours"}')
          : faults.ok(req, res),
      { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false', PIM_STALE_IF_ERROR_MS: '0' },
    );
    expect(await askWithRealKey(facade.url)).toBe(200);
    expect(await askWithRealKey(facade.url, 'forbidden')).toBe(200);
    expect(await whileMadeUpKeysHold(facade.port, () => askWithRealKey(facade.url))).toBe(200);
  });
});
