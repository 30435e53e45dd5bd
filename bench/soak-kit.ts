/**
 * What the soak phases share: the façade as a child process (bench/soak.ts in its `facade` role),
 * a loopback upstream whose behaviour a phase switches, and the probes a phase samples with.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const json = { 'content-type': 'application/json' };

/** A valid catalog envelope at once. */
export const answerNow: Handler = (req, res) =>
  res.writeHead(200, json).end(JSON.stringify({ status: 200, meta: {}, data: [{ url: req.url }] }));

/** The same envelope after `ms`, unless the façade hung up first (no timer outlives the phase). */
export const answerAfter =
  (ms: number): Handler =>
  (req, res) => {
    const timer = setTimeout(() => answerNow(req, res), ms);
    res.once('close', () => clearTimeout(timer));
  };

/** A 500 with a JSON error body, as a failing upstream sends. */
export const failWith500: Handler = (_req, res) => res.writeHead(500, json).end('{"error":"down"}');

/** A recording loopback upstream on 127.0.0.1 whose handler can be swapped while it runs. */
export async function startUpstream(handler: Handler) {
  const paths: string[] = [];
  let current = handler;
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    current(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Every request path seen, in order. */
    paths,
    respond: (next: Handler) => void (current = next),
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}

/** The façade child with `env` over the soak's own process environment. */
export async function startFacade(upstreamUrl: string, env: Record<string, string>) {
  const child: ChildProcess = fork(fileURLToPath(new URL('./soak.ts', import.meta.url)), ['facade'], {
    execArgv: ['--import', 'tsx', '--expose-gc'],
    env: { ...process.env, PIM_BASE_URL: upstreamUrl, LOG_LEVEL: 'silent', ...env },
  });
  const exited = once(child, 'exit').then(() => {
    throw new Error('The façade child exited before it listened');
  });
  const [{ port }] = (await Promise.race([once(child, 'message'), exited])) as [{ port: number }];
  exited.catch(() => undefined);
  return {
    url: `http://127.0.0.1:${port}`,
    /** RSS and live heap (after a forced GC) of the child, in bytes. */
    sample: async () => {
      child.send('sample');
      return ((await once(child, 'message')) as [{ rss: number; heapUsed: number }])[0];
    },
    /** Graceful shutdown of the server, then the child's exit; killed if it takes over 15 s. */
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.send('stop');
      await exited;
      clearTimeout(kill);
    },
  };
}

export type Facade = Awaited<ReturnType<typeof startFacade>>;
type Upstream = Awaited<ReturnType<typeof startUpstream>>;

/**
 * Runs `phase` against a loopback upstream answering with `handler` and the façade child in front of
 * it (`env` set), and stops both however the phase ends: either left running would keep the soak
 * from exiting.
 */
export async function withStack<T>(
  handler: Handler,
  env: Record<string, string>,
  phase: (stack: { upstream: Upstream; facade: Facade }) => Promise<T>,
): Promise<T> {
  const upstream = await startUpstream(handler);
  try {
    const facade = await startFacade(upstream.url, env);
    try {
      return await phase({ upstream, facade });
    } finally {
      await facade.stop();
    }
  } finally {
    await upstream.close();
  }
}

/** Runs `sample`, then waits `ms`, for as long as `more()` holds. */
export async function sampleEvery(ms: number, more: () => boolean, sample: () => Promise<void>): Promise<void> {
  while (more()) {
    await sample();
    await sleep(ms);
  }
}

/** One aliased GraphQL operation of `count` fields, each a distinct upstream call. */
export const distinctFields = (prefix: string, count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `f${i}: classificationGroups(classificationId: "${prefix}-${i}")`).join(' ')} }`;

/** POSTs `query` with `key` as X-API-KEY; resolves to the distinct error codes (empty: success). */
export async function post(url: string, query: string, key: string, signal?: AbortSignal): Promise<string[]> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query }),
    signal,
  });
  const body = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
  const codes = (body.errors ?? []).map((e) => e.extensions?.code ?? `HTTP ${response.status}`);
  return response.ok ? codes : [`HTTP ${response.status}`, ...codes];
}

/** The HTTP status of /readiness. */
export const readiness = async (url: string) => (await fetch(`${url}/readiness`)).status;

/** The breaker state `/metrics` reports (`pim_upstream_breaker_state{state="…"} 1`). */
export async function breakerState(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return /^pim_upstream_breaker_state\{state="([^"]+)"\} 1$/m.exec(text)?.[1] ?? 'unknown';
}

/** How many times each value occurs, as `{ value: count }`. */
export const tally = (values: Array<string | number>) =>
  values.reduce<Record<string, number>>((counts, v) => ({ ...counts, [v]: (counts[v] ?? 0) + 1 }), {});

/** The median of `values` (0 for none). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
