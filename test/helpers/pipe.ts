import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * A named pipe in a directory of its own, both ends open and non-blocking: a log collector that stops
 * reading. Nothing reads `reader` unless the test does, so writes to `writer` fill the pipe's 64 KB and
 * then fail with EAGAIN. The reader and the directory go when the test finishes; the test closes `writer`
 * (usually once a child process has its copy).
 */
export function stalledPipe(): { reader: number; writer: number } {
  const dir = mkdtempSync(join(tmpdir(), 'stalled-pipe-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'pipe');
  execFileSync('mkfifo', [path]);
  // The reader first: opening the writing end of a FIFO nobody reads fails when non-blocking.
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  onTestFinished(() => closeSync(reader));
  return { reader, writer: openSync(path, constants.O_WRONLY | constants.O_NONBLOCK) };
}
