import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startFacade, type Facade } from './helpers/facade.ts';
import { captureLogs } from './helpers/logs.ts';
import { startUpstream, type Upstream } from './helpers/upstream.ts';

const logs = captureLogs('debug');
let upstream: Upstream;
let facade: Facade;
beforeAll(async () => {
  upstream = await startUpstream();
  facade = await startFacade(upstream.url, { PIM_CACHE: 'false' }, { logger: logs.logger });
});
beforeEach(() => {
  upstream.reset();
  logs.lines.length = 0;
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const key = 'client-key-7f3a';
/** Answers every call with `status` and a JSON body whose `error` is `reason`. */
const refuse = (status: number, reason: string) =>
  upstream.respond((_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status, error: reason }));
  });
const search = (args: string) => facade.post(`{ catalogProducts(${args}) }`, {}, { 'x-api-key': key });

it.each([400, 422])("passes the PIM's reason for a %i on to the client and the debug log, cleaned", async (status) => {
  refuse(status, `Invalid sorting property "price" for key ${key}\u0000\u001b[31m\r\nallowed: productId`);
  const { body } = await search('catalogId: "MACHINERY", sorting: "price"');
  const [error] = body.errors;
  const reason = 'Invalid sorting property "price" for key [redacted] [31m allowed: productId';
  expect(error.extensions).toEqual({ code: 'UPSTREAM_BAD_REQUEST', upstream: { status, reason } });
  expect(error.message).toBe(`The catalog service rejected the request (HTTP ${status})`);
  expect(logs.lines).toContainEqual(expect.objectContaining({ level: 20, status, reason }));
  expect(JSON.stringify([body, logs.lines])).not.toContain(key);
});

it('keeps a long reason to a few hundred characters', async () => {
  refuse(400, `Invalid filter: ${'x'.repeat(10_000)}`);
  const { body } = await search('catalogId: "MACHINERY"');
  const { reason } = body.errors[0].extensions.upstream;
  expect(reason).toMatch(/^Invalid filter: x+…$/);
  expect(reason.length).toBeLessThanOrEqual(300);
});

it('names the ids that were not found', async () => {
  refuse(404, 'No Products found');
  const { body } = await search('catalogId: "NOPE", classificationGroupId: "MC-1", languageId: "en"');
  expect(body.errors[0].message).toBe('No Products found: catalogId "NOPE", classificationGroupId "MC-1"');
  expect(body.errors[0].extensions).toEqual({ code: 'NOT_FOUND', upstream: { status: 404 } });

  upstream.respond(
    (_req, res) => void res.writeHead(404, { 'content-type': 'application/json' }).end('{"status":404}'),
  );
  const group = await facade.post('{ classificationGroup(classificationId: "E", classificationGroupId: "G") }');
  expect(group.body.errors[0].message).toBe('Not found (HTTP 404): classificationGroupId "G", classificationId "E"');
});
