import { describe, expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// UPSTREAM.md: the PIM's own 404 is its envelope `{ "status": 404, "meta": { "languageId": "en" }, "error": "No
// Products found" }`; README: "a proxy's 404 page" is UPSTREAM_ERROR, only "upstream 404 with its JSON envelope" is
// NOT_FOUND. A service or gateway in front of the PIM answers a route it does not have with its framework's JSON:
// Spring Boot's /error and Spring Cloud Gateway `{timestamp, status, error, path}`, Spring Boot 3's problem details,
// Spring's ProblemDetail and ASP.NET Core RFC 9457's `{type, title, status, detail, instance}`. Neither has `meta`: it is
// not the PIM's word on the catalog, the route is missing (misrouted, the PIM app away mid-deploy).
const servers = closedAfterEach();

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
const envelope = JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ classificationGroupId: 'G' }] });
const ok: UpstreamHandler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(envelope);
const down: UpstreamHandler = (_req, res) =>
  res.writeHead(503, { 'content-type': 'text/html' }).end('<html>503</html>');
const sequence =
  (...handlers: UpstreamHandler[]): UpstreamHandler =>
  (req, res, i) =>
    handlers[Math.min(i ?? 0, handlers.length - 1)]!(req, res);
const env = { PIM_RETRIES: '0', PIM_CACHE: 'false' };
const query = '{ classificationGroups(classificationId: "ECLASS") }';

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
