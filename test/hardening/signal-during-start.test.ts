import { expect, it, onTestFinished } from 'vitest';
import { startProcess } from '../helpers/process.ts';

// The SIGINT/SIGTERM handlers are installed above main.ts's top-level awaits of its listeners: a signal while the
// server is still starting to listen must find what shutdown() reads already declared. A `let` below those awaits
// (as a change once put it) is in its temporal dead zone then: the ReferenceError reached crash(), whose own `let`
// was in the same zone, and Node printed a bare stack and exited 7 instead of shutting down.
it('a SIGTERM while main.ts awaits its listener shuts down cleanly (exit 0, no ReferenceError)', async () => {
  const server = startProcess(
    process.execPath,
    ['--import', new URL('../fixtures/hold-listen.mjs', import.meta.url).pathname, 'src/main.ts'],
    { env: { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', PIM_BASE_URL: 'http://127.0.0.1:9' } },
  );
  onTestFinished(() => server.kill());
  await server.waitFor(/^listen held$/);
  server.child.kill('SIGTERM');
  const code = await server.exited;
  expect(server.lines.join('\n')).not.toMatch(/ReferenceError|before initialization/);
  expect(code).toBe(0);
});
