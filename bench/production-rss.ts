/**
 * `npm run bench:rss [-- --seconds 15 --connections 200 --json --redis --node-options='--max-semi-space-size=16 …' --env NAME=value]`:
 * the production start's peak RSS (MiB) and CPU per request under load; `--node-options` tries other heap
 * flags than the image's (written with `=`: a value that starts with a dash is otherwise taken for an option), `--env`
 * adds to its environment (repeated: `--env MALLOC_CONF=narenas:2 --env FOO=1`; `--env LD_PRELOAD=` runs it on
 * glibc's malloc). `--redis` runs it as the Deployment does, with REDIS_URL: a redis-server on loopback started
 * with deploy/kubernetes/redis.yaml's arguments takes the HTTP cache, which without Redis keeps its copy of each
 * answer on the heap (PIM_CACHE_MAX_BYTES).
 * Builds the server (`npm run build`) and runs the image's command with its own environment (both read from
 * the Dockerfile's CMD and ENV, so the figure follows the image: the compiled JavaScript, heap flags, malloc
 * (jemalloc), cache budgets) against the bench upstream,
 * drives it with distinct ids, then with the browsing mix, and prints VmHWM after each phase, and the request log
 * lines written (as many as requests, or the logger dropped some).
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { imageCommand, imageEnv } from '../deploy/image/env.ts';
import { freePort } from '../test/helpers/free-port.ts';
import { load, startServer } from './load.ts';
import { freshId, withVariables, zipfId } from './scenarios.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    connections: { type: 'string', default: '200' },
    json: { type: 'boolean', default: false },
    redis: { type: 'boolean', default: false },
    // Another NODE_OPTIONS than the image's, to try heap flags against the same load.
    'node-options': { type: 'string' },
    // More environment of the process, `NAME=value` each (jemalloc's MALLOC_CONF, say).
    env: { type: 'string', multiple: true, default: [] },
  },
});

const root = new URL('../', import.meta.url);
const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
const env = imageEnv(dockerfile);
// `node` is the Node running this bench; the rest of the command (dist/main.js) is what the build writes.
const [, ...args] = imageCommand(dockerfile);
execFileSync('npm', ['run', 'build', '--silent'], { cwd: root.pathname, stdio: 'inherit' });
if (values['node-options'] !== undefined) env.NODE_OPTIONS = values['node-options'];
for (const pair of values.env) {
  const [name, value] = pair.split(/=(.*)/s);
  if (!name || value === undefined) throw new Error(`--env takes NAME=value, got ${JSON.stringify(pair)}`);
  env[name] = value;
}
const upstream = await startServer('upstream');
const redis = values.redis ? await startRedis() : undefined;
if (redis) env.REDIS_URL = redis.url;
// The log lines go to a file, which takes them as fast as a log shipper that keeps up: through a pipe
// this process read while it drove the load, they waited in the server's memory.
const logDir = mkdtempSync(join(tmpdir(), 'bench-rss-'));
const logFile = join(logDir, 'stdout.log');
const child = spawn(process.execPath, args, {
  cwd: root.pathname,
  env: { PATH: process.env.PATH, ...env, PORT: '0', HOST: '127.0.0.1', PIM_BASE_URL: upstream.url, LOG_LEVEL: 'info' },
  stdio: ['ignore', openSync(logFile, 'w'), 'inherit'],
});
// utime + stime of the server process, in µs (clock ticks are 10 ms on Linux).
const cpuUs = () => {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};
// VmHWM is in kB: the figures are MiB.
const hwmMiB = () => {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Math.round(Number(/^VmHWM:\s+(\d+)/m.exec(status)![1]) / 1024);
};
try {
  let port = '';
  for (let tries = 0; !port && tries < 300 && child.exitCode === null; tries++) {
    await setTimeout(100);
    port = /ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(readFileSync(logFile, 'utf8'))?.[1] ?? '';
  }
  if (!port) throw new Error('the server did not start');
  const run = async (next: () => string, seconds: number) => {
    const cpu = cpuUs();
    const result = await load({
      url: `http://127.0.0.1:${port}/graphql`,
      method: 'POST',
      body: () => withVariables(next(), 10),
      headers: { 'content-type': 'application/json', 'x-api-key': 'bench' },
      connections: Number(values.connections),
      duration: seconds,
    });
    // The peak so far, so the browsing figure is the peak of the whole run.
    return {
      peakMiB: hwmMiB(),
      rps: Math.round(result.rps),
      requests: result.requests,
      cpuUs: Math.round((cpuUs() - cpu) / result.requests),
      failures: result.failures,
    };
  };
  const seconds = Number(values.seconds);
  const idleMiB = hwmMiB();
  const distinct = await run(freshId, seconds);
  const browsing = await run(zipfId, seconds);
  // One `request completed` line a request: fewer, and the logger dropped lines it could not write in time.
  const logLines = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('"request completed"')).length;
  const figures = { idleMiB, distinct, browsing, logMiB: Math.round(statSync(logFile).size / 2 ** 20), logLines };
  console.log(values.json ? JSON.stringify(figures) : figures);
} finally {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  await upstream.stop();
  redis?.process.kill('SIGTERM');
  rmSync(logDir, { recursive: true, force: true });
}

/** A redis-server on loopback with the arguments the Deployment's Redis runs with (maxmemory, eviction, no persistence). */
async function startRedis() {
  const manifest = readFileSync(new URL('deploy/kubernetes/redis.yaml', root), 'utf8');
  const spec = parseAllDocuments(manifest)
    .map(
      (document) =>
        document.toJS() as { kind?: string; spec?: { template: { spec: { containers: Array<{ args: string[] }> } } } },
    )
    .find((document) => document.kind === 'Deployment')!.spec!.template.spec;
  const port = await freePort();
  const args = [...spec.containers[0]!.args, '--port', String(port), '--bind', '127.0.0.1'];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  for (let tries = 0; tries < 100; tries++) {
    await setTimeout(50);
    const socket = connect(port, '127.0.0.1');
    const listening = await Promise.race([
      once(socket, 'connect').then(() => true),
      once(socket, 'error').then(() => false),
    ]);
    socket.destroy();
    if (listening) return { url: `redis://127.0.0.1:${port}`, process: child };
  }
  child.kill('SIGTERM');
  throw new Error('redis-server did not start');
}
