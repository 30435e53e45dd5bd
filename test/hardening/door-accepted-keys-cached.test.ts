import { connect, type Socket } from 'node:net';
import { expect, it, vi } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { cacheableEcho } from '../helpers/upstream.ts';

// Commit 4eb1782 (credential.ts): the accepted keys are an LRU "in order of its last answer", so a real key in use
// keeps its door share while another caller mints a new accepted partition per request (a new Authorization).
//
// The order is that of the PIM's answers (upstream-faults.ts onAccepted), which only calls that reach the dispatcher
// give. A real key whose calls are answered by the caches in front of that step (the parsed answers of the HTTP cache,
// answer-lookup.ts; the result cache) is in use all the while but never "answered" again: it stays least recent, and
// the churner's 1,024 new partitions push it out first. It then shares the "unproven keys" share with made-up keys and
// gets 503. Same scenario as test/hardening/door-accepted-keys.test.ts, with the HTTP cache on (the default) and the
// PIM's answers cacheable.

const { start } = closedAfterEach();

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
  'a real key in use, answered from the cache, keeps its door share while another caller churns partitions',
  { timeout: 30_000 },
  async () => {
    const { facade, upstream } = await start(cacheableEcho(600), { HTTP_MAX_IN_FLIGHT: '8' });
    const real = { 'x-api-key': 'real-key-0001' };
    expect(await ask(facade.url, real)).toBe(200);
    const churner = (n: number) => ({ 'x-api-key': 'other-real-key-0002', authorization: `Bearer made-up-${n}` });
    const statuses: number[] = [];
    for (let n = 0; n < 1_030; n += 5) {
      statuses.push(...(await Promise.all([0, 1, 2, 3, 4].map((i) => ask(facade.url, churner(n + i))))));
      // The real key keeps being used meanwhile, and answered (from the cache).
      if (n % 100 === 0) expect(await ask(facade.url, real)).toBe(200);
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    // The real key's later requests never reached the PIM: served from the cache.
    expect(upstream.requests.filter((r) => r.headers['x-api-key'] === 'real-key-0001')).toHaveLength(1);
    const sockets = await Promise.all(Array.from({ length: 6 }, (_, i) => heldPost(facade.port, `made-up-${i}`)));
    try {
      let tries = 0;
      await vi.waitFor(() => expect(ask(facade.url, { 'x-api-key': `never-seen-${tries++}` })).resolves.toBe(503));
      // Fails today with 503: the real key, in use all along, was the least recently *answered by the PIM*.
      expect(await ask(facade.url, real)).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  },
);
