import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { faults, startUpstream, type Upstream } from '../helpers/upstream.ts';

// Three answers of ~700 KB against a 1 MiB process cap: only one fits at a time.
const ANSWER_BYTES = 700_000;
// The process cap alone: the one credential of these requests may hold all of it.
const env = { PIM_MAX_INFLIGHT_BYTES: '1048576', PIM_MAX_INFLIGHT_BYTES_PER_CREDENTIAL: '1048576', PIM_CACHE: 'false' };
const fields = (tag: string) => [0, 1, 2].map((i) => `f${i}: catalogProducts(catalogId: "${tag}-${i}")`).join(' ');
const multipart = { 'content-type': 'application/json', accept: 'multipart/mixed' };

let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream(faults.oversized(ANSWER_BYTES));
  facade = await startFacade(upstream.url, env);
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const tooLarge = (text: string) => text.match(/UPSTREAM_TOO_LARGE/g)?.length ?? 0;

describe('the process byte cap holds for deferred parts', () => {
  it('refuses the fields past the cap in a plain query', async () => {
    const answer = await facade.post(`{ ${fields('plain')} }`);
    expect(answer.status).toBe(200);
    expect(tooLarge(answer.text)).toBe(2);
  });

  it('refuses the same fields past the cap inside @defer', async () => {
    const answer = await facade.request('/graphql', {
      method: 'POST',
      headers: multipart,
      body: JSON.stringify({ query: `{ ... @defer { ${fields('deferred')} } }` }),
    });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/multipart\/mixed/);
    expect(tooLarge(answer.text)).toBe(2);
  });

  it('gives the bytes back when the client leaves a deferred response midway', async () => {
    // The deferred part waits on a call that never ends, after a 700 KB answer beside it was read and charged.
    upstream.respond((req, res) =>
      req.url!.includes('/hang/') ? faults.slowHeaders(60_000)(req, res) : faults.oversized(ANSWER_BYTES)(req, res),
    );
    const controller = new AbortController();
    const query = '{ ... @defer { big: catalogProducts(catalogId: "big") hang: catalogProducts(catalogId: "hang") } }';
    const response = await fetch(facade.url, {
      method: 'POST',
      headers: multipart,
      body: JSON.stringify({ query }),
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    const one = async (tag: string) =>
      tooLarge((await facade.post(`{ f: catalogProducts(catalogId: "${tag}") }`)).text);
    // While the client stays, its bytes count: one more answer of that size does not fit.
    let probes = 0;
    await vi.waitFor(async () => expect(await one(`held-${probes++}`)).toBe(1), { timeout: 5_000, interval: 20 });
    controller.abort();
    // Once it has gone they count no longer, though its stream never ended.
    await vi.waitFor(async () => expect(await one(`freed-${probes++}`)).toBe(0), { timeout: 5_000, interval: 20 });
  });
});
