import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';

const servers = closedAfterEach();
const env = { PIM_TIMEOUT_MS: '500', PIM_RETRIES: '0', PIM_STALE_IF_ERROR_MS: '0' };

// A PIM that never answers for one catalog (a huge one, or one that trips a bug of its own) and answers
// every other call at once.
const slowFor =
  (catalogId: string, alsoTheProbe = false) =>
  (req: IncomingMessage, res: ServerResponse): void => {
    if (req.url?.includes(`/catalogs/${catalogId}/`) || (alsoTheProbe && req.url?.includes('readiness-probe'))) return;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":200,"meta":{},"data":[]}');
  };
const aliases = (catalogId: string, count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `p${i}: catalogProducts(catalogId: "${catalogId}", page: ${i})`).join(' ')} }`;

// One request of 12 aliases, within every default limit, timed out 12 calls in a row: the breaker (10 faults in a
// row) opened for every catalog and credential, and /readiness said 503, for as long as that client kept asking.
it('stays closed when one client’s calls fail while the upstream answers its own probe', async () => {
  const { facade, upstream } = await servers.start(slowFor('SLOW'), env);
  const { body } = await facade.post(aliases('SLOW', 12), {}, { 'x-api-key': 'key-of-attacker' });
  expect(new Set(body.errors.map((e: any) => e.extensions.code))).toEqual(new Set(['UPSTREAM_TIMEOUT']));
  const ask = (catalogId: string) =>
    facade.post(`{ catalogProducts(catalogId: "${catalogId}") }`, {}, { 'x-api-key': 'key-of-someone' });
  expect((await ask('GOOD')).body.errors).toBeUndefined();
  // The breaker asked the PIM its own probe, which the PIM answered: the count starts again.
  await expect.poll(() => upstream.requests.some((r) => r.url.includes('readiness-probe'))).toBe(true);
  expect((await ask('GOOD-TOO')).body.errors).toBeUndefined();
  expect(facade.app.upstream.breaker).toBe('closed');
});

it('opens when the upstream fails its own probe too', async () => {
  const { facade, upstream } = await servers.start(() => undefined, env);
  await facade.post(aliases('ANY', 12));
  await expect.poll(() => facade.app.upstream.breaker, { timeout: 3_000 }).toBe('open');
  expect(upstream.requests.filter((r) => r.url.includes('readiness-probe'))).toHaveLength(1);
  const started = performance.now();
  const { body } = await facade.post('{ catalogProducts(catalogId: "GOOD") }');
  expect(body.errors[0].extensions.code).toBe('UPSTREAM_UNAVAILABLE');
  expect(performance.now() - started).toBeLessThan(250);
});

const timeouts = async (facade: Awaited<ReturnType<typeof servers.startFacade>>) => {
  const { body } = await facade.app.metrics();
  return [...body.matchAll(/pim_upstream_requests_total\{[^}]*status="UPSTREAM_TIMEOUT"[^}]*\} (\d+)/g)].reduce(
    (sum, [, n]) => sum + Number(n),
    0,
  );
};

// The probe went out for a run of faults that a call answered meanwhile had ended: its failure alone opened it.
it('stays closed when its probe fails after a call was answered', async () => {
  const { facade } = await servers.start(slowFor('SLOW', true), env);
  await facade.post(aliases('SLOW', 12), {}, { 'x-api-key': 'key-of-attacker' });
  const { body } = await facade.post('{ catalogProducts(catalogId: "GOOD") }', {}, { 'x-api-key': 'key-of-someone' });
  expect(body.errors).toBeUndefined();
  // The twelve calls and the probe have timed out.
  await expect.poll(() => timeouts(facade), { timeout: 3_000 }).toBe(13);
  expect(facade.app.upstream.breaker).toBe('closed');
});

// A maintenance page for every call, and for the probe a 200 page: readiness calls that no answer, so does the breaker.
it('opens when its probe gets a page that is not JSON', async () => {
  const page = (req: IncomingMessage, res: ServerResponse) =>
    void res
      .writeHead(req.url?.includes('readiness-probe') ? 200 : 503, { 'content-type': 'text/html' })
      .end('<h1>Down for maintenance</h1>');
  const { facade, upstream } = await servers.start(page, { ...env, PIM_BREAKER_THRESHOLD: '3' });
  await facade.post(aliases('ANY', 3));
  await expect.poll(() => upstream.requests.some((r) => r.url.includes('readiness-probe'))).toBe(true);
  await expect.poll(async () => (await facade.post(aliases('MORE', 1)), facade.app.upstream.breaker)).toBe('open');
});

// The probe had a whole PIM_TIMEOUT_MS: in an outage of calls that hang, the breaker opened that much later than
// the threshold alone, while every call waited out its own timeout. A PIM that leaves a probe for a made-up id
// unanswered for two seconds is not answering.
it('opens about two seconds after the threshold, not a whole PIM_TIMEOUT_MS', async () => {
  const { facade } = await servers.start(() => undefined, {
    ...env,
    PIM_TIMEOUT_MS: '6000',
    PIM_BREAKER_THRESHOLD: '3',
  });
  const started = performance.now();
  await facade.post(aliases('ANY', 3));
  const faulted = performance.now();
  await expect.poll(() => facade.app.upstream.breaker, { timeout: 5_000, interval: 100 }).toBe('open');
  console.info('breaker open after the threshold (ms):', Math.round(performance.now() - faulted));
  // Six seconds more before; about two now.
  expect(performance.now() - started).toBeLessThan(6_000 + 3_500);
}, 15_000);

// Hanging calls of other keys held every connection, wave after wave: the probe waited in the queue past its 2 s
// and was taken for a PIM that did not answer, though it was never sent and the PIM answered everything else.
it('stays closed when the probe waits for a connection longer than it may wait for its answer', async () => {
  const { facade, upstream } = await servers.start(slowFor('SLOW'), {
    ...env,
    PIM_TIMEOUT_MS: '3000',
    PIM_BREAKER_THRESHOLD: '1',
    PIM_MAX_CONCURRENCY: '2',
    PIM_MAX_CONCURRENCY_PER_CREDENTIAL: '1',
  });
  const slow = (key: string, page: number) =>
    facade.post(`{ catalogProducts(catalogId: "SLOW", page: ${page}) }`, {}, { 'x-api-key': key });
  // A's first call times out at 3 s, its second takes the freed connection (it queued first); B's, sent at
  // 2.5 s, holds the other until 5.5 s: the probe asked at 3 s waits 2.5 s for a connection.
  const first = [slow('key-of-attacker-a', 1), slow('key-of-attacker-a', 2)];
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  await Promise.all([...first, slow('key-of-attacker-b', 3)]);
  await expect.poll(() => upstream.requests.some((r) => r.url.includes('readiness-probe'))).toBe(true);
  const { body } = await facade.post('{ catalogProducts(catalogId: "GOOD") }', {}, { 'x-api-key': 'key-of-someone' });
  expect(body.errors).toBeUndefined();
  expect(facade.app.upstream.breaker).toBe('closed');
}, 20_000);

// Each answered probe started the count afresh, and every further run of faults sent another at once: a catalog
// that fails fast drew a probe per PIM_BREAKER_THRESHOLD faults, tens a second.
it('sends at most one probe a second', async () => {
  const failing = (req: IncomingMessage, res: ServerResponse) =>
    req.url?.includes('readiness-probe')
      ? void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404}')
      : void res.writeHead(500, { 'content-type': 'application/json' }).end('{"status":500}');
  const { facade, upstream } = await servers.start(failing, { ...env, PIM_BREAKER_THRESHOLD: '3' });
  const started = performance.now();
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: 5 }, (_, i) => facade.post(aliases(`BAD-${round}-${i}`, 12))));
  }
  const seconds = (performance.now() - started) / 1_000;
  const probes = upstream.requests.filter((r) => r.url.includes('readiness-probe')).length;
  expect(probes).toBeGreaterThanOrEqual(1);
  expect(probes).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
  expect(facade.app.upstream.breaker).toBe('closed');
});

// A 404 the HTTP cache kept is answered below the breaker without a word from the PIM, and counted as one:
// a repeat of it among the faults of an outage started the count afresh, so the breaker never opened.
it('takes no answer of the HTTP cache for the PIM answering', async () => {
  const gone = (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.includes('/catalogs/GONE/')) return;
    res.writeHead(404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end('{"status":404}');
  };
  const { facade } = await servers.start(gone, { ...env, PIM_BREAKER_THRESHOLD: '3' });
  const gones = async (alias: string) =>
    expect((await facade.post(`{ ${alias}: catalogProducts(catalogId: "GONE") }`)).body.errors[0].extensions.code).toBe(
      'NOT_FOUND',
    );
  await gones('first');
  await facade.post(aliases('DOWN-A', 2));
  await gones('again');
  await facade.post(aliases('DOWN-B', 2));
  await expect.poll(() => facade.app.upstream.breaker, { timeout: 3_000 }).toBe('open');
});
