import { Writable } from 'node:stream';
import { pino, type Level } from 'pino';

/** A pino logger at `level` whose lines a test reads: raw, and parsed. */
export function captureLogs(level: Level) {
  const raw: string[] = [];
  const lines: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk));
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level }, sink), raw, lines };
}
