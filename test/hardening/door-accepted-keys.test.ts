import { connect, type Socket } from 'node:net';
import { expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

// docs/operations.md, Resilience: "At the door a key counts as its own credential once the PIM has answered one of
// its calls ... and until the PIM refuses one (401 ...); every other key shares one share, so made-up keys with
// bodies that never end cannot hold every slot".
//
// src/pim/credential.ts keeps the partitions the PIM accepted in a Set, "Only partitions the PIM accepted get in, so
// nobody can fill it", and empties it whole once it holds 1,024. But without PIM_API_KEY a partition is every
// forwarded credential header together (X-API-KEY *and* Authorization, the default PIM_FORWARD_HEADERS): one caller
// with one real key, sending a new Authorization value with each request (the PIM authenticates the X-API-KEY and
// answers), makes a new accepted partition per request, and after 1,024 of them every key the PIM ever accepted is
// forgotten at once, however recently it was used. Real keys then fall into the "unproven keys" share, which made-up
// keys with bodies that never end hold: the real key gets 503.

const { start } = closedAfterEach();

/** A POST whose head is complete but whose body never ends: the server counts it in flight from its head. */
function heldPost(port: number, key: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\nX-API-KEY: ${key}\r\n\r\n{"query":`,
      );
      resolve(socket);
    });
    socket.on('error', () => undefined).once('error', reject);
  });
}

const query = JSON.stringify({ query: '{ classificationGroups(classificationId: "real") }' });
const ask = async (url: string, headers: Record<string, string>) =>
  (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: query }))
    .status;

it(
  'a real key in use keeps its door share while another caller sends a new Authorization value per request',
  { timeout: 30_000 },
  async () => {
    const { facade, upstream } = await start(faults.ok, { HTTP_MAX_IN_FLIGHT: '8', PIM_CACHE: 'false' });
    const real = { 'x-api-key': 'real-key-0001' };
    expect(await ask(facade.url, real)).toBe(200);
    // One real key of its own, a made-up Authorization per request: the PIM answers each (it authenticates the key).
    const churner = (n: number) => ({ 'x-api-key': 'other-real-key-0002', authorization: `Bearer made-up-${n}` });
    const statuses: number[] = [];
    for (let n = 0; n < 1_030; n += 5) {
      statuses.push(...(await Promise.all([0, 1, 2, 3, 4].map((i) => ask(facade.url, churner(n + i))))));
      // The real key keeps being used meanwhile, and answered.
      if (n % 100 === 0) expect(await ask(facade.url, real)).toBe(200);
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(upstream.requests.every((r) => r.url.includes('/classifications/real/'))).toBe(true);
    // Six requests with made-up keys hold bodies that never end: the share of keys not seen accepted.
    const sockets = await Promise.all(Array.from({ length: 6 }, (_, i) => heldPost(facade.port, `made-up-${i}`)));
    try {
      // Held: a key never seen before gets 503 now (each try another: one the PIM answers is no longer unseen).
      let tries = 0;
      await vi.waitFor(() => expect(ask(facade.url, { 'x-api-key': `never-seen-${tries++}` })).resolves.toBe(503));
      // Fails today with 503: the real key, answered 30 requests ago, was forgotten with every other one.
      expect(await ask(facade.url, real)).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  },
);
