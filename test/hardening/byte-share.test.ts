import { once } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { useFacade } from '../helpers/facade.ts';
import { faults } from '../helpers/upstream.ts';

// A 1 MiB process cap: two answers of ~460 KB fit in it, not in the three quarters one credential may hold.
const env = { PIM_MAX_INFLIGHT_BYTES: '1048576', PIM_CACHE: 'false', PIM_TIMEOUT_MS: '20000', PIM_RETRIES: '0' };

// Three quarters of the process cap, as the configuration works it out.
const share = loadConfig({ ...env, PIM_BASE_URL: 'http://127.0.0.1' }).pim.byteLimits.maxInflightBytesPerCredential;

const bigs: Promise<unknown>[] = [];
const fixture = useFacade(env, (req, res) => {
  if (req.url!.includes('/hang-')) return faults.slowHeaders(60_000)(req, res);
  if (req.url!.includes('/big-')) bigs.push(once(res, 'close'));
  faults.oversized(req.url!.includes('/big-') ? 450_000 : 150_000)(req, res);
});

const post = (query: string, key: string, signal?: AbortSignal) =>
  fetch(fixture.facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query }),
    signal,
  });

describe('upstream bytes held at once, per credential', () => {
  it('leaves room for other credentials however much one credential holds', async () => {
    // Credential A asks for two large answers, each beside a call that never ends (a client reading slowly holds
    // its answers as long, up to HTTP_SEND_TIMEOUT_MS), and holds what its share allows: one.
    const holder = new AbortController();
    const held = [1, 2].map((n) =>
      post(
        `{ big: catalogProducts(catalogId: "big-${n}") hang: catalogProducts(catalogId: "hang-${n}") }`,
        'key-a',
        holder.signal,
      )
        .then((r) => r.text())
        .catch(() => undefined),
    );
    await vi.waitFor(() => expect(bigs).toHaveLength(2));
    await Promise.all(bigs);
    // Credential B's answer of 150 KB still fits: A could take three quarters of the process cap, no more.
    const answer = (await (await post('{ small: catalogProducts(catalogId: "small") }', 'key-b')).json()) as {
      data: { small: unknown };
      errors?: unknown[];
    };
    expect(answer.errors).toBeUndefined();
    expect(answer.data.small).not.toBeNull();
    holder.abort();
    await Promise.all(held);
  });

  it('tells a request that alone passes its credential share that retrying will not help', async () => {
    const query = '{ a: catalogProducts(catalogId: "big-3") b: catalogProducts(catalogId: "big-4") }';
    const answer = (await (await post(query, 'key-c')).json()) as { errors: { message: string }[] };
    expect(answer.errors.map((e) => e.message)).toEqual([
      `The catalog answers of this request exceed ${share} bytes, the most its credential's requests may hold at once`,
    ]);
  });
});
