import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.ts';
import { faults, startUpstream, type Upstream, type UpstreamHandler } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

// Short deadlines keep the table quick; the time bounds below are generous on purpose.
const env = {
  PIM_TIMEOUT_MS: '400',
  GRAPHQL_BUDGET_MS: '2500',
  PIM_RETRY_BASE_MS: '20',
  PIM_MAX_BODY_BYTES: '65536',
  PIM_CACHE: 'false',
};
const query = '{ classificationGroups(classificationId: "E") }';

let upstream: Upstream;
let facade: Facade | undefined;

beforeAll(async () => {
  upstream = await startUpstream();
});
afterEach(async () => {
  await facade?.close();
  facade = undefined;
});
afterAll(() => upstream.close());

/** The outcome: an error code with its upstream status, or 'data'. */
type Expected = { code: string; status?: number } | 'data';
// Each row: the fault, the outcome, upstream attempts, an upper bound on the time (ms), env overrides.
type Row = [string, UpstreamHandler, Expected, number, number, Record<string, string>?];

const rows: Row[] = [
  ['slow headers', faults.slowHeaders(3_000), { code: 'UPSTREAM_TIMEOUT' }, 1, 2_000],
  ['slow body', faults.slowBody, { code: 'UPSTREAM_TIMEOUT' }, 1, 2_000],
  ['stalled mid-body', faults.stalledMidBody, { code: 'UPSTREAM_TIMEOUT' }, 1, 2_000],
  ['500', faults.status(500, 'java.lang.IllegalStateException'), { code: 'UPSTREAM_ERROR', status: 500 }, 1, 1_500],
  ['502 then success (retried)', faults.sequence(faults.status(502), faults.ok), 'data', 2, 1_500],
  [
    '503, 503 then success (retried twice)',
    faults.sequence(faults.status(503), faults.status(503), faults.ok),
    'data',
    3,
    1_500,
  ],
  ['504 every time (retries run out)', faults.status(504), { code: 'UPSTREAM_ERROR', status: 504 }, 3, 1_500],
  [
    '429 with Retry-After inside the budget',
    faults.sequence(faults.status(429, '', { 'retry-after': '1' }), faults.ok),
    'data',
    2,
    2_500,
  ],
  [
    '429 with Retry-After beyond the budget (not retried)',
    faults.status(429, '', { 'retry-after': '60' }),
    { code: 'UPSTREAM_RATE_LIMITED', status: 429 },
    1,
    1_500,
  ],
  ['connection reset mid-body every time', faults.resetMidBody, { code: 'UPSTREAM_UNAVAILABLE' }, 3, 1_500],
  ['connection reset mid-body, then success', faults.sequence(faults.resetMidBody, faults.ok), 'data', 2, 1_500],
  [
    'HTML with status 200',
    faults.status(200, '<html>Please log in</html>'),
    { code: 'UPSTREAM_ERROR', status: 200 },
    1,
    1_500,
  ],
  ['malformed JSON', faults.status(200, '{"data":['), { code: 'UPSTREAM_ERROR', status: 200 }, 1, 1_500],
  ['empty 401', faults.status(401), { code: 'UNAUTHENTICATED', status: 401 }, 1, 1_500],
  [
    'oversized body (1 MiB over a 64 KiB limit)',
    faults.oversized(2 ** 20),
    { code: 'UPSTREAM_ERROR', status: 200 },
    1,
    1_500,
  ],
  [
    'operation budget shorter than the call deadline (not retried, not an upstream fault)',
    faults.slowHeaders(3_000),
    { code: 'BUDGET_EXCEEDED' },
    1,
    2_000,
    { GRAPHQL_BUDGET_MS: '500', PIM_TIMEOUT_MS: '5000' },
  ],
];

describe('upstream faults', () => {
  it.each(rows)('%s', async (_name, handler, expected, attempts, maxMs, overrides = {}) => {
    upstream.respond(handler);
    facade = await startFacade(upstream.url, { ...env, ...overrides });
    const started = Date.now();
    const { status, body, text } = await facade.post(query);
    const elapsed = Date.now() - started;

    expect(status).toBe(200);
    if (expected === 'data') {
      expect(body.errors).toBeUndefined();
      expect(body.data.classificationGroups.data).toEqual([{ url: '/pxm/pimapi/v1/classifications/E/groups' }]);
    } else {
      expect(body.data).toEqual({ classificationGroups: null });
      const upstreamStatus = expected.status === undefined ? {} : { upstream: { status: expected.status } };
      expect(body.errors.map((e: any) => e.extensions)).toEqual([{ code: expected.code, ...upstreamStatus }]);
      expect(text).not.toMatch(/java|html|log in/i);
    }
    expect(upstream.requests).toHaveLength(attempts);
    expect(elapsed).toBeLessThan(maxMs);
  });

  it('a Retry-After inside the budget is waited out', async () => {
    upstream.respond(faults.sequence(faults.status(503, '', { 'retry-after': '1' }), faults.ok));
    facade = await startFacade(upstream.url, env);
    await facade.post(query);
    const [first, second] = upstream.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  it('an oversized body releases its connection and the next call still works', async () => {
    upstream.respond(faults.oversized(2 ** 20));
    facade = await startFacade(upstream.url, env);
    const closedBefore = upstream.closedSockets;
    await facade.post(query);
    await expect.poll(() => upstream.closedSockets).toBeGreaterThan(closedBefore);
    upstream.respond(faults.ok);
    const { body } = await facade.post(query);
    expect(body.errors).toBeUndefined();
  });
});

describe('refused connections and the circuit breaker', () => {
  it('opens after the threshold, fails fast, probes half-open, and closes when the upstream is back', async () => {
    const port = await freePort();
    facade = await startFacade(`http://127.0.0.1:${port}`, {
      ...env,
      PIM_BREAKER_THRESHOLD: '3',
      // Long enough that the fast failure below comes well before the half-open trial.
      PIM_BREAKER_HALF_OPEN_MS: '1500',
    });
    const codes = async () => (await facade!.post(query)).body.errors?.map((e: any) => e.extensions.code);

    for (let i = 0; i < 3; i++) expect(await codes()).toEqual(['UPSTREAM_UNAVAILABLE']);
    // Open once the breaker's own probe has failed too, a moment after the threshold.
    await expect.poll(() => facade!.app.upstream.breaker).toBe('open');
    expect((await fetch(`${facade.origin}/readiness`)).status).toBe(503);

    // The upstream is back, but the open breaker answers without calling it.
    const back = await startUpstream(faults.ok, port);
    try {
      const started = Date.now();
      expect(await codes()).toEqual(['UPSTREAM_UNAVAILABLE']);
      expect(Date.now() - started).toBeLessThan(500);
      expect(back.requests).toHaveLength(0);

      // Once the half-open delay has passed, one probe call goes through, succeeds, and closes the breaker.
      await expect.poll(codes, { timeout: 5_000, interval: 50 }).toBeUndefined();
      expect(back.requests).toHaveLength(1);
      expect(facade.app.upstream.breaker).toBe('closed');
      expect((await fetch(`${facade.origin}/readiness`)).status).toBe(200);
    } finally {
      await back.close();
    }
  });

  it('does not close on a half-open probe its caller abandoned', async () => {
    const port = await freePort();
    facade = await startFacade(`http://127.0.0.1:${port}`, {
      ...env,
      PIM_BREAKER_THRESHOLD: '2',
      PIM_BREAKER_HALF_OPEN_MS: '300',
    });
    for (let i = 0; i < 2; i++) await facade.post(query);
    // Open once the breaker's own probe has failed too, a moment after the threshold.
    await expect.poll(() => facade!.app.upstream.breaker).toBe('open');
    const hanging = await startUpstream(() => undefined, port);
    try {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const controller = new AbortController();
      const probe = fetch(facade.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
        signal: controller.signal,
      }).catch(() => 'aborted');
      await expect.poll(() => hanging.requests.length).toBe(1);
      controller.abort();
      expect(await probe).toBe('aborted');
      await expect.poll(() => facade!.app.upstream.breaker).toBe('open');
    } finally {
      await hanging.close();
    }
  });

  it.each([404, 401, 405, 414, 431])('is not opened by %i answers', async (status) => {
    upstream.respond(faults.status(status, '{"error":"No groups"}'));
    facade = await startFacade(upstream.url, { ...env, PIM_BREAKER_THRESHOLD: '2' });
    for (let i = 0; i < 4; i++) await facade.post(query);
    expect(facade.app.upstream.breaker).toBe('closed');
    expect(upstream.requests).toHaveLength(4);
  });
});
