import { createServer, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { closedAfterEach } from '../helpers/facade.ts';
import { freePort } from '../helpers/free-port.ts';
import { captureLogs } from '../helpers/logs.ts';
import { faults } from '../helpers/upstream.ts';

const query = '{ classificationGroups(classificationId: "E") }';
const { startUpstream, startFacade } = closedAfterEach();

/** The façade logging at info, with its log lines and a POST of `query`. */
async function start(baseUrl: string, env: Record<string, string>) {
  const { logger, lines } = captureLogs('info');
  const facade = await startFacade(baseUrl, { PIM_CACHE: 'false', PIM_RETRIES: '0', ...env }, { logger });
  const post = () => facade.post(query).then((answer) => answer.body);
  const upstreamLines = () =>
    lines.filter((l) => /^Upstream/.test(l.msg)).map((l) => ({ level: l.level, msg: l.msg, changes: l.changes }));
  return { post, lines, upstreamLines };
}

describe('upstream state in the log', () => {
  it('logs the upstream going away and the breaker opening (warn), then both recovering (info)', async () => {
    const port = await freePort();
    const facade = await start(`http://127.0.0.1:${port}`, {
      PIM_BREAKER_THRESHOLD: '2',
      PIM_BREAKER_HALF_OPEN_MS: '500',
    });
    for (let i = 0; i < 3; i++) await facade.post();
    expect(facade.lines.find((l) => l.msg === 'Upstream not answering')).toMatchObject({
      level: 40,
      code: 'UPSTREAM_UNAVAILABLE',
      cause: 'ECONNREFUSED',
    });
    await startUpstream(faults.ok, port);
    // Fails fast until the half-open delay lets one call through.
    await expect.poll(async () => (await facade.post()).errors, { timeout: 3_000, interval: 50 }).toBeUndefined();
    // A recovery inside the interval of the previous line is logged when that interval ends.
    await expect
      .poll(() => facade.upstreamLines().map(({ level, msg }) => ({ level, msg })))
      .toEqual([
        { level: 40, msg: 'Upstream not answering' },
        { level: 40, msg: 'Upstream circuit breaker opened: calls fail fast with UPSTREAM_UNAVAILABLE' },
        { level: 30, msg: 'Upstream answers again' },
        { level: 30, msg: 'Upstream circuit breaker closed: calls go through again' },
      ]);
    expect(JSON.stringify(facade.lines)).not.toContain(String(port));
  });

  it('a flapping upstream logs at most one line per interval, with the number of changes', async () => {
    const upstream = await startUpstream(faults.ok);
    const facade = await start(upstream.url, { PIM_BREAKER_THRESHOLD: '1000', PIM_BREAKER_HALF_OPEN_MS: '1000' });
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      upstream.respond(faults.resetMidBody);
      await facade.post();
      upstream.respond(faults.ok);
      await facade.post();
    }
    upstream.respond(faults.resetMidBody);
    await facade.post();
    const elapsed = Date.now() - started;
    // Eleven changes in all: the first is logged at once, the others once per interval at most.
    const changes = () => facade.upstreamLines().reduce((sum, line) => sum + (line.changes ?? 1), 0);
    await expect.poll(changes, { timeout: 3_000, interval: 50 }).toBe(11);
    const lines = facade.upstreamLines();
    expect(lines.length).toBeLessThanOrEqual(1 + Math.ceil(elapsed / 1_000));
    expect(lines.at(-1)).toMatchObject({ level: 40, msg: 'Upstream not answering' });
  });
});

// A PIM (or something in front of it) answering with bytes that are not valid HTTP failed every call as
// UPSTREAM_ERROR, opened the breaker, and said nothing of why: not even at debug.
it('logs an upstream that answers in something other than valid HTTP, with what undici found', async () => {
  const sockets = new Set<Socket>();
  const garbled = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n{}'));
  });
  await new Promise<void>((resolve) => garbled.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => garbled.close(() => resolve()));
  });
  const { port } = garbled.address() as { port: number };
  const facade = await start(`http://127.0.0.1:${port}`, {});
  expect((await facade.post()).errors[0].extensions.code).toBe('UPSTREAM_ERROR');
  expect(facade.lines.find((l) => l.msg === 'Upstream answers in something other than valid HTTP')).toMatchObject({
    level: 40,
    code: 'UPSTREAM_ERROR',
    cause: 'HTTPParserError',
    detail: 'Response does not match the HTTP/1.1 protocol (Invalid character in Content-Length)',
  });
});
