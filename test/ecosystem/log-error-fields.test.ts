import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { useFacade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// The PIM fails the catalog BROKEN and answers every other.
const answer = (req: IncomingMessage, res: ServerResponse) => {
  if (req.url?.includes('BROKEN')) return void res.writeHead(500).end();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [] }));
};
const { logger, lines } = captureLogs('info');
const fixture = useFacade({ PIM_RETRIES: '0' }, answer, { logger });

const lineOf = async (id: string) => {
  await expect.poll(() => lines.some((line) => line.reqId === id)).toBe(true);
  const { errors, errorCode, status } = lines.find((line) => line.reqId === id)!;
  return { status, errors, errorCode };
};
const post = (id: string, body: string, type = 'application/json') =>
  fetch(fixture.facade.url, { method: 'POST', headers: { 'content-type': type, 'x-request-id': id }, body });
const query = (text: string) => JSON.stringify({ query: text });

// An operator reading the log of a bad day needs to see which requests failed and why: a GraphQL error is mostly a
// 200, which the status alone does not tell. docs/operations.md, Logs: the line counts the errors its client was sent
// and names the first one's code.
describe('the request log line of a request with errors', () => {
  it('counts the errors sent and names the first one’s code; a clean answer has neither field', async () => {
    await post('clean', query('{ catalogProducts(catalogId: "FINE") }'));
    await post('failed', query('{ a: catalogProducts(catalogId: "BROKEN") b: catalogProducts(catalogId: "BROKEN2") }'));
    await post('invalid', query('{ nothingHere }'));
    expect(await lineOf('clean')).toEqual({ status: 200, errors: undefined, errorCode: undefined });
    expect(await lineOf('failed')).toEqual({ status: 200, errors: 2, errorCode: 'UPSTREAM_ERROR' });
    expect(await lineOf('invalid')).toMatchObject({ errors: 1, errorCode: 'GRAPHQL_VALIDATION_FAILED' });
  });

  it('names the code of a refusal sent instead of a result', async () => {
    await post('form', query('{ __typename }'), 'text/plain');
    await post('too-large', 'x'.repeat(200_000));
    expect(await lineOf('form')).toEqual({ status: 415, errors: 1, errorCode: 'UNSUPPORTED_MEDIA_TYPE' });
    expect(await lineOf('too-large')).toEqual({ status: 413, errors: 1, errorCode: 'REQUEST_TOO_LARGE' });
  });

  it('counts the errors of every part of a streamed answer', async () => {
    const deferred = '{ ... @defer { catalogProducts(catalogId: "BROKEN") } }';
    const response = await fetch(fixture.facade.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed', 'x-request-id': 'deferred' },
      body: query(deferred),
    });
    await response.text();
    expect(await lineOf('deferred')).toEqual({ status: 200, errors: 1, errorCode: 'UPSTREAM_ERROR' });
  });
});
