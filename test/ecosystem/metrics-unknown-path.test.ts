import { expect, it } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';
import { echo } from '../helpers/upstream.ts';

// docs/operations.md, the metrics table: the HTTP server answers a path it does not serve itself (404
// PATH_NOT_FOUND), logged and counted as its own refusals are, in http_requests_refused_total; the table said such a
// 404 was Yoga's and counted in neither.
const { start } = closedAfterEach();

const sample = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
};

it('counts an unknown path among the HTTP server refusals, and logs it', async () => {
  const { logger, lines } = captureLogs('info');
  const { facade } = await start(echo, {}, { logger });
  const answer = await facade.get('/nope', { 'x-request-id': 'unknown-path' });
  expect(answer.status).toBe(404);
  expect(answer.body.errors[0].extensions.code).toBe('PATH_NOT_FOUND');
  await expect.poll(() => lines.filter((l) => l.reqId === 'unknown-path').map((l) => l.status)).toEqual([404]);
  const text = (await facade.get('/metrics')).text;
  expect(sample(text, 'http_requests_refused_total{status="404"}')).toBe(1);
  expect(sample(text, 'graphql_errors_total{code="PATH_NOT_FOUND"}')).toBe(0);
});
