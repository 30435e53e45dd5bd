import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import type { UpstreamHandler } from '../helpers/upstream.ts';

// UPSTREAM.md: the PIM's own 404 is its envelope `{ "status": 404, "meta": { "languageId": "en" }, "error": "No
// Products found" }`; README: "a proxy's 404 page" is UPSTREAM_ERROR, only "upstream 404 with its JSON envelope" is
// NOT_FOUND. A Java service or gateway in front of the PIM (Spring Boot's /error, Spring Cloud Gateway) answers a route
// it does not have with its own JSON: `{timestamp, status, error, path}`. It has no `meta`: it is not the PIM's word
// on the catalog, the route is missing (misrouted, the PIM app away mid-deploy).
const servers = closedAfterEach();

const envelope = JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ classificationGroupId: 'G' }] });
const springNotFound: UpstreamHandler = (req, res) =>
  res
    .writeHead(404, { 'content-type': 'application/json' })
    .end(
      JSON.stringify({ timestamp: '2024-05-13T09:30:00.000+00:00', status: 404, error: 'Not Found', path: req.url }),
    );
const ok: UpstreamHandler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(envelope);
const down: UpstreamHandler = (_req, res) =>
  res.writeHead(503, { 'content-type': 'text/html' }).end('<html>503</html>');
const sequence =
  (...handlers: UpstreamHandler[]): UpstreamHandler =>
  (req, res, i) =>
    handlers[Math.min(i ?? 0, handlers.length - 1)]!(req, res);
const env = { PIM_RETRIES: '0', PIM_CACHE: 'false' };
const query = '{ classificationGroups(classificationId: "ECLASS") }';

it("a framework's JSON 404 (Spring's {timestamp,status,error,path}, no meta) is not NOT_FOUND of the ids asked for", async () => {
  const { facade } = await servers.start(springNotFound, env);
  const { body } = await facade.post(query);
  expect(body.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_ERROR', upstream: { status: 404 } });
});

it("a framework's JSON 404 does not end the last good answer: the outage after it is still served stale", async () => {
  const { facade } = await servers.start(sequence(ok, springNotFound, down), env);
  expect((await facade.post(query)).body.errors).toBeUndefined();
  await facade.post(query);
  const after = (await facade.post(query)).body;
  expect(after.errors).toBeUndefined();
  expect(after.data.classificationGroups).toEqual(JSON.parse(envelope));
});

it("readiness is not fooled by a gateway that answers every path with its framework's JSON 404", async () => {
  const { facade, upstream } = await servers.start(springNotFound, { PIM_RETRIES: '0' });
  const { status } = await facade.get('/readiness');
  expect(upstream.requests.length).toBeGreaterThan(0);
  expect(status).toBe(503);
});

it("a framework's JSON 404 is not kept by the HTTP cache (PIM_CACHE_TTL_MS set): the PIM is asked again", async () => {
  const { facade, upstream } = await servers.start(sequence(springNotFound, ok), {
    PIM_RETRIES: '0',
    PIM_CACHE_TTL_MS: '60000',
  });
  expect((await facade.post(query)).body.errors?.[0]?.extensions?.code).toBe('UPSTREAM_ERROR');
  expect((await facade.post(query)).body.errors).toBeUndefined();
  expect(upstream.requests).toHaveLength(2);
});
