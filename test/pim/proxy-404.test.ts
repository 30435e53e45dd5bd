import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// UPSTREAM.md (what is known of the REST service): the PIM's 404 is its envelope `{ "status": 404, "meta": {...}, "error": "No Products found" }`
// ("No Classification found" for classifications). A 404 page from a proxy or ingress in front of it (HTML, or
// an empty body) says nothing about the catalog: the route is missing, the PIM was not asked.
const servers = closedAfterEach();

const envelope = JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ classificationGroupId: 'G' }] });
const proxy404: UpstreamHandler = (_req, res) =>
  res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body><h1>404 Not Found</h1><hr>nginx</body></html>');
const ok: UpstreamHandler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(envelope);
const down: UpstreamHandler = (_req, res) =>
  res.writeHead(503, { 'content-type': 'text/html' }).end('<html>503</html>');

const sequence =
  (...handlers: UpstreamHandler[]): UpstreamHandler =>
  (req, res, i) =>
    handlers[Math.min(i ?? 0, handlers.length - 1)]!(req, res);
const env = { PIM_RETRIES: '0', PIM_CACHE: 'false' };
const query = '{ classificationGroups(classificationId: "ECLASS") }';

it('a proxy 404 page (no PIM envelope) is not reported as NOT_FOUND of the ids asked for', async () => {
  const { facade } = await servers.start(sequence(ok, proxy404), env);
  expect((await facade.post(query)).body.errors).toBeUndefined();
  const during = (await facade.post(query)).body;

  expect(during.errors?.[0]?.extensions?.code).not.toBe('NOT_FOUND');
});

it('a proxy 404 page does not end the last good answer: the outage after it is still served stale', async () => {
  const { facade } = await servers.start(sequence(ok, proxy404, down), env);
  expect((await facade.post(query)).body.errors).toBeUndefined();
  await facade.post(query);
  const after = (await facade.post(query)).body;
  expect(after.errors?.[0]?.extensions?.code).toBeUndefined();
  expect(after.data.classificationGroups).toEqual(JSON.parse(envelope));
  expect(after.extensions?.stale).toHaveLength(1);
});

it('readiness is not fooled by a proxy that answers every path with a 404 page', async () => {
  const { facade, upstream } = await servers.start(proxy404, { PIM_RETRIES: '0' });
  const status = (await facade.get('/readiness')).status;
  expect(upstream.requests.length).toBeGreaterThan(0);
  // Every field would fail; the PIM never answered.
  expect(status).toBe(503);
});

const html = '<html><body>404 Not Found</body></html>';
// Kept by the HTTP cache (heuristically with PIM_CACHE_TTL_MS, or by its own max-age), the proxy's page would be
// replayed as an outage after the PIM is back, without asking it.
it.each([
  ['HTML without caching headers, PIM_CACHE_TTL_MS set', 'text/html', html, {}, { PIM_CACHE_TTL_MS: '60000' }],
  ['HTML with max-age', 'text/html', html, { 'cache-control': 'max-age=60' }, {}],
  // Labelled JSON, but no JSON object: a gateway's.
  ['labelled JSON, empty, with max-age', 'application/json', '', { 'cache-control': 'max-age=60' }, {}],
  ['labelled JSON, empty, PIM_CACHE_TTL_MS set', 'application/json', '', {}, { PIM_CACHE_TTL_MS: '60000' }],
  ['labelled JSON, a string, with max-age', 'application/json', '"Not Found"', { 'cache-control': 'max-age=60' }, {}],
])('a proxy 404 page %s is not kept: the PIM is asked again', async (_name, type, body, headers, settings) => {
  const page: UpstreamHandler = (_req, res) => res.writeHead(404, { 'content-type': type, ...headers }).end(body);
  const { facade, upstream } = await servers.start(sequence(page, ok), { PIM_RETRIES: '0', ...settings });
  expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  expect((await facade.post(query)).body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(2);
});

it("the PIM's own 404 is kept: asked again within its max-age, the HTTP cache answers", async () => {
  const notFound: UpstreamHandler = (_req, res) =>
    res
      .writeHead(404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
      .end('{"status":404,"meta":{"languageId":"en"},"error":"No Classification found"}');
  const { facade, upstream } = await servers.start(notFound, { PIM_RETRIES: '0' });
  for (let i = 0; i < 2; i++) expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  expect(upstream.requests).toHaveLength(1);
});

// Judged as readAnswer judges it: a byte order mark ignored (the PIM's NOT_FOUND, kept), JSON nested past 512 levels no
// body (an outage, not kept).
it("the PIM's own 404 with a byte order mark is kept", async () => {
  const notFound: UpstreamHandler = (_req, res) =>
    res
      .writeHead(404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
      .end('\uFEFF{"status":404,"meta":{"languageId":"en"},"error":"No Classification found"}');
  const { facade, upstream } = await servers.start(notFound, { PIM_RETRIES: '0' });
  for (let i = 0; i < 2; i++) expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  expect(upstream.requests).toHaveLength(1);
});

it('a 404 of JSON nested past 512 levels (no answer) is not kept: the PIM is asked again', async () => {
  const deep: UpstreamHandler = (_req, res) =>
    res
      .writeHead(404, { 'content-type': 'application/json', 'cache-control': 'max-age=60' })
      .end(`{"error":${'['.repeat(600)}${']'.repeat(600)}}`);
  const { facade, upstream } = await servers.start(sequence(deep, ok), { PIM_RETRIES: '0' });
  expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  expect((await facade.post(query)).body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(2);
});

// A service or gateway in front of the PIM answers a route it does not have with its framework's JSON: Spring Boot's
// /error and Spring Cloud Gateway `{timestamp, status, error, path}`; Spring Boot 3's problem details, Spring's
// ProblemDetail and ASP.NET Core RFC 9457's `{type, title, status, detail, instance}`. Neither has `meta`: it is not
// the PIM's word on the catalog, the route is missing (misrouted, the PIM app away mid-deploy).
const bodies: Record<string, (path: string | undefined) => object> = {
  "Spring's {timestamp, status, error, path}": (path) => ({
    timestamp: '2024-05-13T09:30:00.000+00:00',
    status: 404,
    error: 'Not Found',
    path,
  }),
  'RFC 9457 problem details': (path) => ({
    type: 'about:blank',
    title: 'Not Found',
    status: 404,
    detail: `No static resource ${path}.`,
    instance: path,
  }),
};
describe.each(Object.entries(bodies))("a framework's JSON 404: %s, no meta", (_name, body) => {
  const notFound: UpstreamHandler = (req, res) =>
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify(body(req.url)));

  it('is UPSTREAM_ERROR, not NOT_FOUND of the ids asked for', async () => {
    const { facade } = await servers.start(notFound, env);
    const { body } = await facade.post(query);
    expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstream: { status: 404 } });
  });

  it('does not end the last good answer: the outage after it is still served stale', async () => {
    const { facade } = await servers.start(sequence(ok, notFound, down), env);
    expect((await facade.post(query)).body.errors).toBeUndefined();
    await facade.post(query);
    const after = (await facade.post(query)).body;
    expect(after.errors).toBeUndefined();
    expect(after.data.classificationGroups).toEqual(JSON.parse(envelope));
  });

  it('does not fool readiness when a gateway answers every path so', async () => {
    const { facade, upstream } = await servers.start(notFound, { PIM_RETRIES: '0' });
    const { status } = await facade.get('/readiness');
    expect(upstream.requests.length).toBeGreaterThan(0);
    expect(status).toBe(503);
  });

  it('is not kept by the HTTP cache (PIM_CACHE_TTL_MS set): the PIM is asked again', async () => {
    const { facade, upstream } = await servers.start(sequence(notFound, ok), {
      PIM_RETRIES: '0',
      PIM_CACHE_TTL_MS: '60000',
    });
    expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
    expect((await facade.post(query)).body.errors).toBeUndefined();
    expect(upstream.requests).toHaveLength(2);
  });
});
