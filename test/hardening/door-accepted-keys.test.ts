import { expect, it, vi } from 'vitest';
import { heldPost } from '../helpers/burst.ts';
import { closedAfterEach } from '../helpers/facade.ts';
import { cacheableEcho, faults } from '../helpers/upstream.ts';

// docs/operations.md, Resilience: "At the door a key counts as its own credential once the PIM has answered one of
// its calls ... and until the PIM refuses one (401 ...); every other key shares one share, so made-up keys with
// bodies that never end cannot hold every slot".
//
// The partitions the PIM accepted were a Set emptied whole at 1,024. A call without an X-API-KEY is partitioned by
// its forwarded credential headers together (the default PIM_FORWARD_HEADERS adds Authorization): a caller with a new
// Authorization per request, on a PIM that answers it, makes a new accepted partition per request, so after 1,024 of
// them every key the PIM had accepted was forgotten at once, and real keys fell into the "unproven keys" share that
// made-up keys with bodies that never end hold: 503. Kept in order of use since, a key in use stays; a key whose
// calls the caches answer (never reaching the PIM again) is in use all the same.

const { start } = closedAfterEach();

const query = JSON.stringify({ query: '{ classificationGroups(classificationId: "real") }' });
const ask = async (url: string, headers: Record<string, string>) =>
  (await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: query }))
    .status;

it.each([
  ['answered by the PIM', faults.ok, { PIM_CACHE: 'false' }, 12],
  ['answered from the cache', cacheableEcho(600), { PIM_CACHE: 'true' }, 1],
])(
  'a real key in use (%s) keeps its door share while another caller sends a new Authorization per request',
  { timeout: 30_000 },
  async (_name, handler, env, realCalls) => {
    const { facade, upstream } = await start(handler, { HTTP_MAX_IN_FLIGHT: '8', ...env });
    const real = { 'x-api-key': 'real-key-0001' };
    expect(await ask(facade.url, real)).toBe(200);
    // No X-API-KEY, a made-up Authorization per request: this PIM answers each.
    const churner = (n: number) => ({ authorization: `Bearer made-up-${n}` });
    const statuses: number[] = [];
    for (let n = 0; n < 1_030; n += 5) {
      statuses.push(...(await Promise.all([0, 1, 2, 3, 4].map((i) => ask(facade.url, churner(n + i))))));
      // The real key keeps being used meanwhile.
      if (n % 100 === 0) expect(await ask(facade.url, real)).toBe(200);
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(upstream.requests.filter((r) => r.headers['x-api-key'] === 'real-key-0001')).toHaveLength(realCalls);
    // Six requests with made-up keys hold bodies that never end: the share of keys not seen accepted.
    const sockets = await Promise.all(Array.from({ length: 6 }, (_, i) => heldPost(facade.port, `made-up-${i}`)));
    try {
      // Held: a key never seen before gets 503 now (each try another: one the PIM answers is no longer unseen).
      let tries = 0;
      await vi.waitFor(() => expect(ask(facade.url, { 'x-api-key': `never-seen-${tries++}` })).resolves.toBe(503));
      expect(await ask(facade.url, real)).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  },
);
