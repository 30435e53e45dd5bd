import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { echo, startUpstream, type Upstream } from '../helpers/upstream.ts';
import { startFacade, type Facade } from '../helpers/facade.ts';
import { captureLogs } from '../helpers/logs.ts';

// A client that leaves is one info line (test/hardening/disconnect-logs.test.ts; errors.ts isClientGone leaves its
// field errors unmasked, so Yoga logs none). That holds for the first request on a connection only: node:http ends
// the requests pipelined behind it with `abortOutgoing` (an Error 'aborted', code ECONNRESET), not the DOMException
// AbortError isClientGone looks for, so every field of each is masked as unexpected and logged at error level with
// its stack. One client that pipelines requests of many aliases and resets writes that many error lines.

let upstream: Upstream;
let facade: Facade;
const { logger, lines, raw } = captureLogs('debug');

beforeAll(async () => {
  // Answers after 300 ms: every call is still in flight when the client resets.
  upstream = await startUpstream((req, res) => void setTimeout(() => res.destroyed || echo(req, res), 300));
  facade = await startFacade(upstream.url, { PIM_CACHE: 'false' }, { logger });
});
afterAll(async () => {
  await facade?.close();
  await upstream?.close();
});

const post = (id: string, query: string) => {
  const body = JSON.stringify({ query });
  return (
    `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nX-Request-Id: ${id}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
};

it('a client that resets with pipelined requests in flight logs no error line and no stack', async () => {
  const before = lines.length;
  const fields = (tag: string) =>
    Array.from({ length: 5 }, (_, i) => `a${i}: classificationGroups(classificationId: "${tag}-${i}")`).join(' ');
  const socket = connect(facade.port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(post('first', `{ ${fields('P1')} }`) + post('second', `{ ${fields('P2')} }`));
  // Both requests' calls are out (node:http hands a pipelined request to the app at once).
  await expect.poll(() => upstream.requests.filter((r) => /\/P[12]-/.test(r.url)).length, { timeout: 5_000 }).toBe(10);
  socket.resetAndDestroy();
  const gone = () =>
    lines
      .slice(before)
      .filter((l) => l.msg === 'client went away')
      .map((l) => l.reqId);
  await expect.poll(() => gone().sort(), { timeout: 5_000 }).toEqual(['first', 'second']);
  await sleep(500);
  const errorLines = lines.slice(before).filter((l) => l.level >= 40);
  expect(errorLines.map((l) => `${l.level} ${l.msg}`)).toEqual([]);
  expect(raw.slice(before).join('')).not.toMatch(/"stack"/);
});
