import { constants, readFileSync } from 'node:fs';
import { expect, it, onTestFinished } from 'vitest';
import { startProcess } from './helpers/process.ts';

const serverEnv = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PIM_BASE_URL: '' };

/** `node src/main.ts` with its stdout on a terminal (`script` gives it one), until it says it is ready. */
async function readyLineAtTerminal(env: Record<string, string>) {
  const server = startProcess('script', ['-qfec', `${process.execPath} src/main.ts`, '/dev/null'], {
    env: { ...serverEnv, ...env },
  });
  onTestFinished(() => server.kill());
  return server.waitFor(/(.*GraphQL server ready.*)/);
}

it('logs lines a person reads at a terminal in development', async () => {
  // Explicit: vitest sets NODE_ENV=test, which the child would inherit.
  const line = await readyLineAtTerminal({ NODE_ENV: 'development' });
  expect(line).not.toMatch(/^\{/);
  expect(line).toMatch(/INFO.*GraphQL server ready at http:\/\/127\.0\.0\.1:\d+\/graphql/);
});

it.each(['production', 'test'])('logs JSON when NODE_ENV=%s, even at a terminal', async (nodeEnv) => {
  const line = await readyLineAtTerminal({ NODE_ENV: nodeEnv, PIM_DEMO: 'true' });
  expect(JSON.parse(line)).toMatchObject({ level: 30, msg: expect.stringMatching(/^GraphQL server ready/) });
});

// A pipe left blocking would make each write to a stalled log collector hold one of libuv's four threads.
it('writes its log lines to a stdout pipe it has made non-blocking', async () => {
  const server = startProcess(process.execPath, ['src/main.ts'], {
    env: { ...serverEnv, NODE_ENV: 'production', PIM_DEMO: 'true' },
  });
  onTestFinished(() => server.kill());
  await server.waitFor(/GraphQL server ready/);
  const flags = /^flags:\s+(\d+)$/m.exec(readFileSync(`/proc/${server.child.pid}/fdinfo/1`, 'utf8'))![1]!;
  expect(parseInt(flags, 8) & constants.O_NONBLOCK).toBe(constants.O_NONBLOCK);
});
