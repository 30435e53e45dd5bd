import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export interface Stats {
  served: number;
  /** Requests served by each server of a process that runs several. */
  servedBy: number[];
  cpu: NodeJS.CpuUsage;
  rss: number;
  peakRss: number;
  /** process.memoryUsage() and the young generation's size, to tell heap from off-heap memory. */
  memory: NodeJS.MemoryUsage & { newSpace: number };
}

const devNull = openSync('/dev/null', 'w');

/** A benchmark server in a child process (see server.ts). */
export interface ServerProcess {
  url: string;
  /** With `gc`, a full collection runs first (the servers run with --expose-gc). */
  stats(gc?: boolean): Promise<Stats>;
  stop(): Promise<void>;
  /** The `i`th server of a process that runs several: its own URL and request count. */
  part(i: number): ServerProcess;
}

/** Forks `bench/server.ts` for `kind` and resolves once it listens on loopback. */
export async function startServer(
  kind: string,
  options: object = {},
  nodeFlags: string[] = [],
): Promise<ServerProcess> {
  const entry = fileURLToPath(new URL('./server.ts', import.meta.url));
  // `NAME=value` among the flags is an environment variable of the process (MALLOC_CONF=narenas:1).
  const env = Object.fromEntries(nodeFlags.filter((f) => !f.startsWith('-')).map((f) => f.split(/=(.*)/s, 2)));
  const child: ChildProcess = fork(entry, [kind, JSON.stringify(options)], {
    // BENCH_STRIP_TYPES=1 runs the server on Node's own type stripping, as `npm start` does (line numbers in profiles stay true).
    execArgv: [
      ...(process.env.BENCH_STRIP_TYPES === '1' ? [] : ['--import', 'tsx']),
      '--expose-gc',
      ...nodeFlags.filter((f) => f.startsWith('-')),
    ],
    env: { ...process.env, ...env },
    // Log lines go through the real logger to a real file descriptor, and are thrown away there.
    stdio: ['ignore', devNull, 'inherit', 'ipc'],
  });
  const [ready] = (await once(child, 'message')) as [{ url: string; urls: string[] }];
  const whole: ServerProcess = {
    url: ready.url,
    async stats(gc = false) {
      child.send({ type: 'stats', gc });
      const [stats] = (await once(child, 'message')) as [Stats];
      return stats;
    },
    async stop() {
      if (!child.connected) return;
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
    part: (i) => ({
      ...whole,
      url: ready.urls[i]!,
      stats: async (gc) => {
        const stats = await whole.stats(gc);
        return { ...stats, served: stats.servedBy[i]! };
      },
    }),
  };
  return whole;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  /** A function gives every request its own body (fresh ids). */
  body?: string | (() => string);
  /** Gives every request its own path (fresh ids in a REST call). */
  path?: () => string;
  headers?: Record<string, string>;
  connections: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  amount?: number;
}

/** What autocannon saw, with latencies from every response's own hrtime, in ms. */
export interface LoadResult {
  requests: number;
  failures: number;
  rps: number;
  p50: number;
  p99: number;
}

/** Drives one target with autocannon and reports exact percentiles (its histogram rounds to whole ms). */
export async function load(options: LoadOptions, collect = true): Promise<LoadResult> {
  const latencies: number[] = [];
  let errorBodies = 0;
  const { body, path } = options;
  const fresh = (request: autocannon.Request): autocannon.Request => ({
    ...request,
    ...(typeof body === 'function' ? { body: body() } : {}),
    ...(path ? { path: path() } : {}),
  });
  const started = process.hrtime.bigint();
  let done!: (result: autocannon.Result) => void;
  let failed!: (error: unknown) => void;
  const finished = new Promise<autocannon.Result>((resolve, reject) => ((done = resolve), (failed = reject)));
  const instance = autocannon(
    {
      url: options.url,
      method: options.method ?? 'GET',
      ...(typeof options.body === 'string' ? { body: options.body } : {}),
      headers: options.headers ?? {},
      connections: options.connections,
      ...(options.amount ? { amount: options.amount } : { duration: options.duration ?? 3 }),
      // A GraphQL error comes with HTTP 200; read the bodies so such answers count as failures.
      requests: [
        {
          ...(typeof body === 'function' || path ? { setupRequest: (request) => fresh(request) } : {}),
          onResponse: (_status, text) => void (text.startsWith('{"errors"') && errorBodies++),
        },
      ],
    },
    (error, result) => (error ? failed(error) : done(result)),
  );
  if (collect) instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await finished;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return {
    requests: result.requests.total,
    failures: result.non2xx + result.errors + result.timeouts + errorBodies,
    rps: result.requests.total / seconds,
    p50: at(0.5),
    p99: at(0.99),
  };
}
