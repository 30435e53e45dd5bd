import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { faults, startUpstream, type Upstream, type UpstreamHandler } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';

let upstream: Upstream;
let facade: Facade | undefined;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterEach(async () => {
  await facade?.close().catch(() => undefined);
  facade = undefined;
});
afterAll(() => upstream.close());

const query = (id: string) => `{ classificationGroups(classificationId: "${id}") }`;
const post = (url: string, id: string, signal?: AbortSignal) =>
  fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: query(id) }),
    signal,
  });

describe('graceful shutdown', () => {
  it('stops accepting, lets requests in flight finish, then closes', async () => {
    upstream.respond(faults.slowHeaders(300));
    facade = await startFacade(upstream.url, { SHUTDOWN_GRACE_MS: '5000' });
    const url = facade.origin;
    const inFlight = ['A', 'B', 'C'].map((id) => post(url, id));
    await expect.poll(() => upstream.requests.length).toBe(3);

    const started = Date.now();
    const shutdown = facade.close();
    facade = undefined;
    // New connections are refused at once, while the three requests still get their answers.
    await expect(post(url, 'D')).rejects.toThrow();
    const bodies = await Promise.all(inFlight.map(async (r) => (await r).json()));
    expect(bodies.map((b: any) => b.data.classificationGroups.data[0].url)).toEqual([
      '/pxm/pimapi/v1/classifications/A/groups',
      '/pxm/pimapi/v1/classifications/B/groups',
      '/pxm/pimapi/v1/classifications/C/groups',
    ]);
    await shutdown;
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(upstream.requests).toHaveLength(3);
  });

  it('a second call (SIGINT after SIGTERM) is the same shutdown: both end once the last answer is out', async () => {
    upstream.respond(faults.slowHeaders(300));
    facade = await startFacade(upstream.url, { SHUTDOWN_GRACE_MS: '5000' });
    const answered = post(facade.origin, 'A');
    await expect.poll(() => upstream.requests.length).toBe(1);
    const started = Date.now();
    const shutdowns = [facade.server.shutdown(), facade.server.shutdown()];
    facade = undefined;
    expect((await answered).status).toBe(200);
    await Promise.all(shutdowns);
    // Well under the 5 s grace, which only a request still running may use.
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('cuts what is still running when the grace period ends', async () => {
    // An answer already coming is read to its end (a call the PIM has not begun to answer is let go before the grace
    // ends: test/http/shutdown-queued.test.ts); this one never ends.
    upstream.respond(faults.slowBody);
    facade = await startFacade(upstream.url, { SHUTDOWN_GRACE_MS: '300', GRAPHQL_BUDGET_MS: '60000' });
    // Settled into a value right away, so the expected failure is never an unhandled rejection.
    const stuck = post(facade.origin, 'A').then(
      () => 'answered',
      () => 'cut',
    );
    await expect.poll(() => upstream.requests.length).toBe(1);
    const started = Date.now();
    await facade.close();
    facade = undefined;
    expect(await stuck).toBe('cut');
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe('client disconnect', () => {
  it('ends the upstream calls the request started once the PIM answers them, long before any deadline', async () => {
    const closed: string[] = [];
    // The PIM works on each call for 500 ms, as it would whether or not anyone still waits (cancelled-calls.test.ts).
    const slow: UpstreamHandler = (req, res) => {
      req.socket.once('close', () => closed.push(req.url ?? ''));
      setTimeout(() => res.destroyed || faults.ok(req, res), 500);
    };
    upstream.respond(slow);
    facade = await startFacade(upstream.url, { GRAPHQL_BUDGET_MS: '60000', PIM_TIMEOUT_MS: '60000' });
    const controller = new AbortController();
    const request = fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ a: ${query('A').slice(2, -2)} b: ${query('B').slice(2, -2)} }` }),
      signal: controller.signal,
    });
    await expect.poll(() => upstream.requests.length).toBe(2);
    const started = Date.now();
    controller.abort();
    await expect(request).rejects.toThrow();
    // Both upstream connections close once the PIM has answered (the answers unread), not at the 60 s deadlines.
    await expect
      .poll(() => closed.sort(), { timeout: 5_000 })
      .toEqual(['/pxm/pimapi/v1/classifications/A/groups', '/pxm/pimapi/v1/classifications/B/groups']);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('client disconnects and the breaker', () => {
  it.each(['true', 'false'])('calls abandoned by their clients never open it (coalescing %s)', async (coalesce) => {
    upstream.respond(() => undefined);
    facade = await startFacade(upstream.url, {
      PIM_BREAKER_THRESHOLD: '2',
      PIM_COALESCE: coalesce,
      PIM_CACHE: 'false',
    });
    const controllers = ['A', 'B', 'C', 'D'].map(() => new AbortController());
    const requests = controllers.map((c, i) => post(facade!.origin, `abandoned-${i}`, c.signal).catch(() => 'aborted'));
    await expect.poll(() => upstream.requests.length).toBe(4);
    for (const controller of controllers) controller.abort();
    expect(await Promise.all(requests)).toEqual(['aborted', 'aborted', 'aborted', 'aborted']);

    upstream.respond(faults.ok);
    // Let the abandoned calls unwind through every layer before the next caller arrives.
    await new Promise((resolve) => setTimeout(resolve, 100));
    // With a threshold of 2, four counted failures would have opened the breaker: this would fail fast.
    const { body } = await facade.post(query('after'));
    expect(body.errors).toBeUndefined();
  });
});
