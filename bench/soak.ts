/**
 * Soak run (not a test), in phases, each against the façade in a child process and a loopback
 * upstream of its own:
 * - memory: many thousands of requests, good and hostile, against an upstream that mixes in faults,
 *   and whether the façade's memory stays flat (bench/soak-memory.ts);
 * - burst: one credential's burst must not starve another's requests (bench/soak-burst.ts);
 * - blip: /readiness recovers after an upstream outage with no GraphQL traffic (bench/soak-blip.ts).
 * Exits 1 when a phase fails.
 *
 *   npm run soak                      # every phase; 30,000 requests, at most 180 s, in memory
 *   SOAK_REQUESTS=100000 npm run soak
 *   SOAK_PHASES=burst,blip npm run soak
 */
import type { AddressInfo } from 'node:net';
import { blipPhase } from './soak-blip.ts';
import { burstPhase } from './soak-burst.ts';
import { memoryPhase } from './soak-memory.ts';

const phases: Record<string, () => Promise<boolean>> = { memory: memoryPhase, burst: burstPhase, blip: blipPhase };

if (process.argv[2] === 'facade') await runFacade();
else await runPhases((process.env.SOAK_PHASES ?? Object.keys(phases).join(',')).split(','));

/** Runs the named phases one after the other; exit code 1 if any failed or is unknown. */
async function runPhases(names: string[]) {
  const unknown = names.filter((name) => !(name in phases));
  if (unknown.length > 0) {
    console.error(`Unknown SOAK_PHASES ${unknown.join(',')}: choose among ${Object.keys(phases).join(',')}`);
    process.exit(1);
  }
  console.log(`soak phases ${names.join(',')} on Node ${process.version}`);
  const failed: string[] = [];
  for (const name of names) if (!(await phases[name]!())) failed.push(name);
  console.log(`\nsoak: ${failed.length === 0 ? 'every phase passed' : `FAILED ${failed.join(', ')}`}`);
  process.exitCode = failed.length === 0 ? 0 : 1;
}

/** The child: the real app behind the real server, answering memory samples over IPC. */
async function runFacade() {
  const { loadConfig } = await import('../src/config.ts');
  const { createApp } = await import('../src/app.ts');
  const { createServer: createFacadeServer } = await import('../src/http/server.ts');
  const config = loadConfig();
  const app = createApp({ ...config, pimBaseUrl: config.pimBaseUrl! });
  const server = createFacadeServer(app, config.http);
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', async (message: string) => {
    if (message === 'sample') {
      globalThis.gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      process.send!({ rss, heapUsed });
    } else if (message === 'stop') {
      await server.shutdown();
      process.exit(0);
    }
  });
}
