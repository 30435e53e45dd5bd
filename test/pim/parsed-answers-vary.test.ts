// @module-tag redis-server
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closedAfterEach, type Facade } from '../helpers/facade.ts';
import { startRedis, untilConnected } from '../helpers/redis.ts';

// docs/operations.md, "Taking load off the PIM": "A fresh hit also keeps its parsed body in process until the entry
// goes stale, so later hits skip the HTTP machinery and JSON parsing." Most HTTP servers and gateways (nginx
// gzip_vary, Spring/Express compression) answer `Vary: Accept-Encoding`. The façade itself sends every call with
// `accept-encoding: identity` and `accept: application/json` (steps/send.ts), so the stored variant's Vary values
// are those; the parsed-answer store compared them with the call's headers before send.ts adds them, and never
// matched: every repeat went through the HTTP cache, its stream replay and JSON.parse again.

const { start } = closedAfterEach();
const headers = { 'x-api-key': 'key-of-a-123' };
const query = '{ groups: classificationGroups(classificationId: "ETIM") }';

const upstreamCalls = async (facade: Facade) => {
  const { body } = await facade.app.metrics();
  let total = 0;
  for (const match of body.matchAll(/^pim_upstream_requests_total\{[^}]*\} (\d+)$/gm)) total += Number(match[1]);
  return total;
};

let redis: Awaited<ReturnType<typeof startRedis>>;
beforeAll(async () => void (redis = await startRedis()));
afterAll(async () => redis?.stop());

// The HTTP cache's entries in Redis (stale serving's copies and marks have families of their own).
const storedInRedis = async () => (await redis.client.keys('pim-graphql:http-cache:*')).length;

describe.each([
  { store: 'in memory', env: (): Record<string, string> => ({}), connected: async () => {}, stored: async () => {} },
  {
    store: 'in Redis',
    env: (): Record<string, string> => ({ REDIS_URL: redis.url }),
    // The façade's three connections (the HTTP cache's among them) ready: before, its stores fail fast.
    connected: () => untilConnected(redis, 3),
    // Undici writes the entry after the answer is out: the next request waits until Redis holds it.
    stored: () => vi.waitFor(async () => expect(await storedInRedis()).toBeGreaterThan(0), { timeout: 5_000 }),
  },
])('HTTP cache $store', ({ env, connected, stored }) => {
  it.each([undefined, 'Accept-Encoding', 'Accept', 'Accept-Encoding, Origin'])(
    'keeps answers with Vary: %s parsed, as it does without Vary',
    async (vary) => {
      const { upstream, facade } = await start((req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'cache-control': 'max-age=60',
          ...(vary ? { vary } : {}),
        });
        res.end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url }] }));
      }, env());
      await redis.client.flushall();
      await connected();
      for (let i = 0; i < 5; i++) {
        // A new document each time: the cache of whole results does not answer it.
        const answer = await facade.post(query.replace('groups', `groups${i}`), {}, headers);
        expect(answer.body.errors).toBeUndefined();
        if (i === 0) await stored();
      }
      expect(upstream.requests).toHaveLength(1);
      // The miss, then the HTTP cache hit that parses the body once more and keeps it; the three after it are kept answers.
      expect(await upstreamCalls(facade)).toBe(2);
    },
  );
});
