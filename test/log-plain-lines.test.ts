import { expect, it } from 'vitest';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { plainLines } from '../src/logger.ts';

// Each line as written, with its time (the one field two writes a moment apart may differ in) made equal.
function sink() {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(String(chunk).replace(/"time":\d+/, '"time":0'));
      done();
    },
  });
  return { raw, stream };
}

const tricky = {
  reqId: 'a"b\\c',
  method: 'POST',
  path: '/graphql\u0001\n\u2028é€😀',
  operations: ['query "x"', 'mutation \\y'],
  status: 200,
  durationMs: 3,
};

it('writes the line pino writes for the same fields, bindings and message', () => {
  const { raw, stream } = sink();
  const logger = pino({ level: 'info', redact: ['headers.authorization'] }, stream).child(
    { part: 'web' },
    { redact: [] },
  );
  plainLines(logger, 'info', 'request "completed"')(tricky);
  logger.info(tricky, 'request "completed"');
  expect(raw).toHaveLength(2);
  expect(JSON.parse(raw[0]!)).toEqual(JSON.parse(raw[1]!));
  // The same fields in the same order: a reader that greps a line sees what pino would have written.
  expect(Object.keys(JSON.parse(raw[0]!))).toEqual(Object.keys(JSON.parse(raw[1]!)));
  expect(raw[0]!.endsWith('}\n')).toBe(true);
});

it('writes nothing below the logger level', () => {
  const { raw, stream } = sink();
  plainLines(pino({ level: 'warn' }, stream), 'info', 'request completed')(tricky);
  expect(raw).toEqual([]);
});

it('leaves a logger with a mixin, formatter or message prefix to write its own line', () => {
  for (const options of [
    { mixin: () => ({ traceId: 't1' }) },
    { formatters: { log: (o: object) => ({ ...o, traceId: 't1' }) } },
    { msgPrefix: '[web] ' },
  ]) {
    const { raw, stream } = sink();
    const logger = pino({ level: 'info', ...options }, stream);
    plainLines(logger, 'info', 'request completed')({ status: 200 });
    logger.info({ status: 200 }, 'request completed');
    expect(JSON.parse(raw[0]!)).toEqual(JSON.parse(raw[1]!));
  }
});
