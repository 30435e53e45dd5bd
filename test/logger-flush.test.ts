import { once, type EventEmitter } from 'node:events';
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  createReadStream,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { symbols } from 'pino';
import { expect, it, onTestFinished, vi } from 'vitest';
import { createLogger, droppedLogLines } from '../src/logger.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { stalledPipe } from './helpers/pipe.ts';

// The logger buffers lines and flushes them every second; createLogger's interval is faked so a test sets the pace.
function bufferedLogger() {
  vi.useFakeTimers({ toFake: ['setInterval'] });
  onTestFinished(() => void vi.useRealTimers());
  const file = join(mkdtempSync(join(tmpdir(), 'log-')), 'out.log');
  const logger = createLogger('info', { fd: openSync(file, 'w') });
  const stream = (logger as unknown as Record<symbol, EventEmitter & { end(): void }>)[symbols.streamSym]!;
  // Ending the stream lets the write under way finish before it closes the file.
  onTestFinished(async () => {
    const closed = once(stream, 'close');
    stream.end();
    await closed;
  });
  return { logger, file, stream };
}

it('writes a line shorter than its buffer within a second', async () => {
  const { logger, file } = bufferedLogger();
  logger.info('a quiet minute');
  vi.advanceTimersByTime(1_000);
  await vi.waitFor(() => expect(readFileSync(file, 'utf8')).toContain('a quiet minute'));
});

it('adds no listener per flush while a write is still under way (a busy stream never drains)', () => {
  const { logger, stream } = bufferedLogger();
  const before = { drain: stream.listenerCount('drain'), error: stream.listenerCount('error') };
  // Over the 4 KB buffer: a write is under way, and it cannot finish while this test runs synchronously.
  for (let i = 0; i < 100; i++) logger.info({ i }, 'x'.repeat(100));
  // Twenty seconds of flushes: on main each added a 'drain' and an 'error' listener, past Node's warning at 10.
  vi.advanceTimersByTime(20_000);
  expect(stream.listenerCount('drain')).toBe(before.drain);
  expect(stream.listenerCount('error')).toBe(before.error);
});

// Under load one turn of the event loop answers a few hundred requests, and sonic-boom starts its next write only when
// the last one's callback runs, in a later turn: at 16 KB a write (its default), a file that took every byte at once
// still left lines waiting, up to the 8 MiB bound and then dropped (about 45 % of them at 4,000 requests a second).
it('writes every line of a busy process to a file that keeps up, however many lines a turn of the event loop logs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'log-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'out.log');
  const logger = createLogger('info', { fd: openSync(file, 'w') });
  const stream = (logger as unknown as Record<symbol, EventEmitter & { end(): void }>)[symbols.streamSym]!;
  const before = droppedLogLines();
  const turns = 300;
  const perTurn = 200;
  for (let turn = 0; turn < turns; turn++) {
    for (let i = 0; i < perTurn; i++) logger.info({ turn, i, path: '/graphql' }, 'x'.repeat(200));
    await new Promise(setImmediate);
  }
  expect(droppedLogLines() - before).toBe(0);
  const closed = once(stream, 'close');
  stream.end();
  await closed;
  expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(turns * perTurn);
});

it('drops lines and counts them past 8 MiB waiting for a stdout nobody reads, and takes lines again once it is read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'log-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  // A FIFO opened for reading and writing, not read yet: the first 64 KB fill it, then every write waits.
  const fifo = join(dir, 'stalled');
  execFileSync('mkfifo', [fifo]);
  const logger = createLogger('info', { fd: openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK) });
  const stream = (logger as unknown as Record<symbol, EventEmitter & { end(): void }>)[symbols.streamSym]!;
  let dropped = 0;
  stream.on('drop', () => dropped++);
  const before = droppedLogLines();
  // 16 MiB of lines of about 1 KB while the FIFO is full.
  for (let i = 0; i < 16 * 1024; i++) logger.info({ i }, 'x'.repeat(1_000));
  expect(dropped).toBeGreaterThan(6 * 1024);
  expect(dropped).toBeLessThan(10 * 1024);
  expect(droppedLogLines() - before).toBe(dropped);
  // Each app's registry reports the whole process's count.
  for (const { registry } of [createMetrics(), createMetrics()]) {
    expect(await registry.metrics()).toMatch(new RegExp(`^log_lines_dropped_total ${droppedLogLines()}$`, 'm'));
  }

  // Someone reads at last: what waited is written, and the room it took is free again.
  const reader = createReadStream(fifo).resume();
  onTestFinished(async () => {
    const closed = once(stream, 'close');
    stream.end();
    await closed;
    reader.destroy();
  });
  await once(stream, 'drain');
  const droppedWhileStalled = dropped;
  // 1 MiB more, written at once again: all of it fits.
  for (let i = 0; i < 1024; i++) logger.info({ i }, 'y'.repeat(1_000));
  expect(dropped).toBe(droppedWhileStalled);
});

// sonic-boom says 'drain' once at most its 4 KB buffer is left: a flush called while a write was under way
// called back with the lines logged since still waiting, and pino's synchronous flush at exit then retried
// them for ever into a pipe that had filled meanwhile. A pipe takes whole 4 KB pages: 8 KB of room take an
// 8 KB line, not the four lines after it; 500 bytes take nothing.
it.each([
  [500, 0, 150],
  [8_192, 8_000, 4],
])(
  'lets the process exit within the bound when stdout has room for %i bytes (a first line of %i, then %i lines)',
  async (room, first, lines) => {
    const { reader, writer } = stalledPipe();
    // Full, then `room` bytes read off.
    // Blocks, then single bytes: a pipe takes a write of up to 4 KB whole or not at all.
    for (const block of [Buffer.alloc(4_096, 'x'), Buffer.from('x')]) {
      for (;;) {
        try {
          writeSync(writer, block);
        } catch {
          break;
        }
      }
    }
    for (let left = room; left > 0;) left -= readSync(reader, Buffer.alloc(Math.min(left, 4_096)));
    const script = [
      `import { createLogger, endLogs } from ${JSON.stringify(new URL('../src/logger.ts', import.meta.url).pathname)};`,
      "const logger = createLogger('info', { fd: 3 });",
      `if (${first}) logger.info('z'.repeat(${first}));`,
      `for (let i = 0; i < ${lines}; i++) logger.info({ i }, 'y'.repeat(200));`,
      'await endLogs(logger, 1_500);',
      'process.exit(0);',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'inherit', writer],
    });
    closeSync(writer);
    onTestFinished(() => void child.kill('SIGKILL'));
    const exited = once(child, 'exit').then(([code]) => code);
    const verdict = await Promise.race([exited, sleep(8_000).then(() => 'still running 8 s later')]);
    expect(verdict).toBe(0);
  },
);
