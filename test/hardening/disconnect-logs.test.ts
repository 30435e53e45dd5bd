import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

let upstream: Upstream;
let facade: Facade;
const { logger, lines, raw } = captureLogs('debug');

beforeAll(async () => {
  // Answers after 300 ms: every call is still in flight when its client leaves, and frees its slot for the next
  // request's calls once answered (cancelled-calls.test.ts).
  upstream = await startUpstream((req, res) => void setTimeout(() => res.destroyed || echo(req, res), 300));
  facade = await startFacade(
    upstream.url,
    { PIM_CACHE: 'false', GRAPHQL_BUDGET_MS: '60000', PIM_TIMEOUT_MS: '60000' },
    { logger },
  );
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

/** One request of 15 aliased upstream reads, which its client abandons once the first is sent (the rest may queue). */
async function abandoned(request: number): Promise<void> {
  const fields = Array.from(
    { length: 15 },
    (_, i) => `a${i}: classificationGroups(classificationId: "R${request}-${i}")`,
  );
  const controller = new AbortController();
  const answer = fetch(facade.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': `gone-${request}` },
    body: JSON.stringify({ query: `{ ${fields.join(' ')} }` }),
    signal: controller.signal,
  }).catch(() => 'aborted');
  await expect
    .poll(() => upstream.requests.filter((r) => r.url.includes(`/R${request}-`)).length, { timeout: 5_000 })
    .toBeGreaterThan(0);
  controller.abort();
  expect(await answer).toBe('aborted');
}

describe('a client that goes away mid-request', () => {
  it('is one info-or-debug line per request, without a stack, and a metric', async () => {
    const before = lines.length;
    await Promise.all([1, 2, 3].map(abandoned));
    const gone = () => lines.slice(before).filter((l) => /client (went away|disconnected)/i.test(l.msg ?? ''));
    await expect
      .poll(() => gone().length, { timeout: 5_000 })
      .toBe(3)
      .catch((error: unknown) => {
        const errorLines = lines.slice(before).filter((l) => l.level >= 50);
        const bytes = raw.slice(before).join('').length;
        throw new Error(`${(error as Error).message}; ${errorLines.length} error lines, ${bytes} bytes logged`);
      });
    const after = lines.slice(before);
    expect(after.filter((l) => l.level >= 40)).toEqual([]);
    expect(raw.slice(before).join('')).not.toMatch(/"stack"|\n\s+at /);
    expect(
      gone()
        .map((l) => l.reqId)
        .sort(),
    ).toEqual(['gone-1', 'gone-2', 'gone-3']);
    expect(gone().every((l) => l.level <= 30)).toBe(true);
    const metrics = await facade.get('/metrics');
    expect(metrics.text).toMatch(/^graphql_client_disconnects_total 3$/m);
    // The 45 field errors nobody received are not counted as errors sent.
    expect(metrics.text).not.toMatch(/^graphql_errors_total\{/m);
  });
});

describe('a client that goes away mid-stream (@defer)', () => {
  it('is one info-or-debug line and a metric too, though the status went out first', async () => {
    const before = lines.length;
    const counted = async () =>
      Number(/^graphql_client_disconnects_total (\d+)$/m.exec((await facade.get('/metrics')).text)?.[1]);
    const disconnects = await counted();
    // A stream read to its end is no disconnect, however its connection ends later.
    const whole = await fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'whole-stream' },
      body: JSON.stringify({ query: '{ __typename ... @defer { __typename } }' }),
    });
    expect(await whole.text()).toContain('"hasNext":false');
    const deferred = Array.from({ length: 5 }, (_, i) => `d${i}: classificationGroups(classificationId: "S-${i}")`);
    const controller = new AbortController();
    const response = await fetch(facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'gone-stream' },
      body: JSON.stringify({ query: `{ __typename ... @defer { ${deferred.join(' ')} } }` }),
      signal: controller.signal,
    });
    // The first part is out (the status with it); the deferred calls hang upstream.
    await response.body!.getReader().read();
    await expect.poll(() => upstream.requests.filter((r) => r.url.includes('/S-')).length).toBeGreaterThan(0);
    controller.abort();
    const gone = () => lines.slice(before).filter((l) => l.msg === 'client went away' && l.reqId === 'gone-stream');
    await expect.poll(() => gone().length, { timeout: 5_000 }).toBe(1);
    expect(gone()[0]!.level).toBeLessThanOrEqual(30);
    expect(lines.slice(before).filter((l) => l.level >= 40)).toEqual([]);
    expect(await counted()).toBe(disconnects + 1);
    expect(
      lines
        .slice(before)
        .filter((l) => l.reqId === 'whole-stream')
        .map((l) => l.msg),
    ).toEqual(['request completed']);
  });
});
