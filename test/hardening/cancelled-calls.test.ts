import { describe, expect, it } from 'vitest';
import { echo, type UpstreamHandler } from '../helpers/upstream.ts';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();

/**
 * A PIM that works on every request it received for `ms`, whether or not its caller is still connected (as most
 * HTTP servers do): `working` counts the requests it is busy with, `most` the highest that count reached.
 */
function busyPim(ms: number) {
  const load = { working: 0, most: 0 };
  const handler: UpstreamHandler = (req, res) => {
    load.working += 1;
    load.most = Math.max(load.most, load.working);
    setTimeout(() => {
      load.working -= 1;
      if (!res.destroyed) echo(req, res);
    }, ms);
  };
  return { load, handler };
}

const ask = (origin: string, id: string, signal?: AbortSignal) =>
  fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `{ classificationGroups(classificationId: "${id}") }` }),
    signal,
  });

describe('PIM_MAX_CONCURRENCY against clients that cancel', () => {
  it('holds while the PIM still works on calls whose callers left', async () => {
    const pim = busyPim(300);
    const { upstream, facade } = await servers.start(pim.handler, { PIM_MAX_CONCURRENCY: '2', PIM_CACHE: 'false' });
    // A typeahead client (or an attacker) that gives up on each request as soon as its call reached the PIM.
    for (let i = 0; i < 6; i++) {
      const controller = new AbortController();
      const answer = ask(facade.origin, `typed-${i}`, controller.signal).catch(() => 'cancelled');
      const before = upstream.requests.length;
      await expect.poll(() => upstream.requests.length).toBeGreaterThan(before);
      controller.abort();
      expect(await answer).toBe('cancelled');
    }
    // Nobody waits on them, yet the PIM works on them: the façade gave it no more than two at once.
    await expect.poll(() => pim.load.working, { timeout: 5_000 }).toBe(0);
    expect(pim.load.most).toBeLessThanOrEqual(2);
  });

  it('a caller that leaves gets its answer ended at once, and the slot serves the next caller once the PIM answered', async () => {
    const pim = busyPim(300);
    const { upstream, facade } = await servers.start(pim.handler, { PIM_MAX_CONCURRENCY: '1', PIM_CACHE: 'false' });
    const controller = new AbortController();
    const left = ask(facade.origin, 'left', controller.signal).catch(() => 'cancelled');
    await expect.poll(() => upstream.requests.length).toBe(1);
    controller.abort();
    expect(await left).toBe('cancelled');
    const next = await ask(facade.origin, 'next');
    const body = (await next.json()) as { data?: { classificationGroups?: { data: Array<{ url: string }> } } };
    expect(body.data?.classificationGroups?.data[0]?.url).toBe('/pxm/pimapi/v1/classifications/next/groups');
    expect(pim.load.most).toBe(1);
  });

  it('a call left on a PIM that never answers gives its slot back when its time runs out', async () => {
    const { upstream, facade } = await servers.start(
      (req, res) => (req.url?.includes('/hung/') ? undefined : echo(req, res)),
      { PIM_MAX_CONCURRENCY: '1', PIM_CACHE: 'false', PIM_TIMEOUT_MS: '500' },
    );
    const controller = new AbortController();
    const left = ask(facade.origin, 'hung', controller.signal).catch(() => 'cancelled');
    await expect.poll(() => upstream.requests.length).toBe(1);
    controller.abort();
    expect(await left).toBe('cancelled');
    const started = Date.now();
    const next = (await (await ask(facade.origin, 'next')).json()) as { errors?: unknown };
    expect(next.errors).toBeUndefined();
    // It waited for the hung call's 500 ms, not for the budget.
    expect(Date.now() - started).toBeGreaterThan(200);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('holds against a PIM that sends an informational answer first: a 103 is not the answer', async () => {
    const pim = busyPim(300);
    const { upstream, facade } = await servers.start(
      (req, res) => {
        res.writeEarlyHints({ link: '</pxm/pimapi/v1/x>; rel=preload' });
        pim.handler(req, res);
      },
      { PIM_MAX_CONCURRENCY: '2', PIM_CACHE: 'false' },
    );
    for (let i = 0; i < 6; i++) {
      const controller = new AbortController();
      const answer = ask(facade.origin, `hinted-${i}`, controller.signal).catch(() => 'cancelled');
      const before = upstream.requests.length;
      await expect.poll(() => upstream.requests.length).toBeGreaterThan(before);
      // Some callers leave before the 103 arrives, some after.
      await new Promise((resolve) => setTimeout(resolve, i % 2 === 0 ? 0 : 30));
      controller.abort();
      expect(await answer).toBe('cancelled');
    }
    await expect.poll(() => pim.load.working, { timeout: 5_000 }).toBe(0);
    expect(pim.load.most).toBeLessThanOrEqual(2);
  });

  it('holds for calls whose request budget ran out while the PIM still works on them', async () => {
    const pim = busyPim(1_000);
    const env = { PIM_MAX_CONCURRENCY: '1', PIM_CACHE: 'false', PIM_TIMEOUT_MS: '5000', GRAPHQL_BUDGET_MS: '400' };
    const { upstream, facade } = await servers.start(pim.handler, { ...env, PIM_RETRIES: '0' });
    const answers: Array<Promise<unknown>> = [];
    for (let i = 0; i < 5; i++) {
      answers.push(ask(facade.origin, `budget-${i}`).then((r) => r.json()));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    // Each caller hears its budget run out at once; the PIM works on one call at a time.
    const codes = (await Promise.all(answers)).map((body: any) => body.errors?.[0]?.extensions?.code);
    expect(codes).toContain('BUDGET_EXCEEDED');
    await expect.poll(() => pim.load.working, { timeout: 5_000 }).toBe(0);
    expect(pim.load.most).toBe(1);
  });
});
