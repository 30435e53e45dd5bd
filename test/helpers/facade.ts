import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { createApp, type AppExtras } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createServer, type FacadeServer } from '../../src/http/server.ts';
import { startUpstream, type Upstream, type UpstreamHandler } from './upstream.ts';

/** A whole answer, read: status, headers, text, and the parsed body (undefined when not JSON). */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** Sends one request to a path of the façade and reads the whole answer. */
type Send = (path: string, init?: RequestInit) => Promise<Answer>;

/** What a test injects in place of the defaults: a logger to read, a span exporter. */
export interface FacadeOptions {
  logger?: Logger;
  extras?: AppExtras;
}

/**
 * The real app behind the real node:http server (src/http/server.ts) on 127.0.0.1:0, configured
 * from `env` with `baseUrl` as the upstream. `close()` shuts the server and the app down.
 */
export async function startFacade(baseUrl: string, env: Record<string, string> = {}, options: FacadeOptions = {}) {
  const config = loadConfig({ PIM_BASE_URL: baseUrl, ...env });
  const app = createApp({ ...config, pimBaseUrl: baseUrl }, options.logger, options.extras);
  const server: FacadeServer = createServer(app, config.http);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const request: Send = async (path, init) => {
    const response = await fetch(`${origin}${path}`, init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: parseJson(text) };
  };
  return {
    app,
    server,
    port,
    /** `http://127.0.0.1:<port>`. */
    origin,
    /** The GraphQL endpoint: `<origin>/graphql`. */
    url: `${origin}/graphql`,
    /** Sends one request to a path of the façade and reads the whole answer. */
    request,
    /** GETs a path, e.g. `/readiness` or `/graphql?query=...`. */
    get: (path: string, headers: Record<string, string> = {}) => request(path, { headers }),
    /** POSTs one operation to /graphql. */
    post: (query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) =>
      postJson(request, { query, variables }, headers),
    /** POSTs any JSON body to /graphql, e.g. a batch of operations. */
    postBody: (body: unknown, headers: Record<string, string> = {}) => postJson(request, body, headers),
    close: () => server.shutdown(),
  };
}

export type Facade = Awaited<ReturnType<typeof startFacade>>;

function postJson(request: Send, body: unknown, headers: Record<string, string>): Promise<Answer> {
  return request('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Registers vitest hooks that start a recording upstream (answering with `handler`) and a façade
 * against it for the file, and give the upstream a fresh recording and its first handler before
 * each test. Read `upstream` and `facade` inside tests.
 */
export function useFacade(env: Record<string, string> = {}, handler?: UpstreamHandler, options: FacadeOptions = {}) {
  const fixture = {} as { upstream: Upstream; facade: Facade };
  beforeAll(async () => {
    fixture.upstream = await startUpstream(handler);
    fixture.facade = await startFacade(fixture.upstream.url, env, options);
  });
  beforeEach(() => fixture.upstream.reset());
  afterAll(async () => {
    await fixture.facade?.close();
    await fixture.upstream?.close();
  });
  return fixture;
}

/**
 * For files whose tests each start their own servers: `startUpstream`, `startFacade` and `start` (the
 * two at once) that register what they start, and an afterEach hook that closes it. Upstreams close
 * first, so a call still waiting on one fails at once instead of holding up the façade's shutdown.
 */
export function closedAfterEach() {
  const upstreams: Upstream[] = [];
  const facades: Facade[] = [];
  afterEach(async () => {
    for (const upstream of upstreams.splice(0)) await upstream.close();
    for (const facade of facades.splice(0)) await facade.close();
  });
  const kept = <T>(list: T[], started: T) => (list.push(started), started);
  const servers = {
    startUpstream: async (...args: Parameters<typeof startUpstream>) => kept(upstreams, await startUpstream(...args)),
    startFacade: async (...args: Parameters<typeof startFacade>) => kept(facades, await startFacade(...args)),
    /** An upstream answering with `handler` and a façade in front of it, configured from `env`. */
    async start(handler: UpstreamHandler, env: Record<string, string> = {}, options: FacadeOptions = {}) {
      const upstream = await servers.startUpstream(handler);
      return { upstream, facade: await servers.startFacade(upstream.url, env, options) };
    },
  };
  return servers;
}
