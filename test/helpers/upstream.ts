import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the upstream saw of one request: the raw request-target, exactly as sent on the wire. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** When it arrived (Date.now()). */
  at: number;
}

/** Answers one request; the upstream passes `attempt`, the requests since the handler was set, from 0. */
export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse, attempt?: number) => void;

const json = { 'content-type': 'application/json' };

/** Answers 200 with an envelope that echoes the request-target, so tests can tell bodies apart. */
export const echo = (req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(200, json).end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

/** Answers like `echo`, cacheable for `seconds` (Cache-Control max-age). */
export const cacheableEcho =
  (seconds: number): UpstreamHandler =>
  (req, res) => {
    res.setHeader('cache-control', `max-age=${seconds}`);
    echo(req, res);
  };

/** Answers each request-target with its own catalog page of 2 MB, kept a minute: aliases of one page cost one read. */
export const largePage: UpstreamHandler = (req, res) => {
  const page = JSON.stringify({ status: 200, meta: { id: req.url }, data: [{ text: 'x'.repeat(2_000_000) }] });
  res.writeHead(200, { ...json, 'cache-control': 'max-age=60' }).end(page);
};

/** `count` aliases of one catalogProducts field: one upstream call, its answer sent `count` times. */
export const aliasesOf = (id: string, count: number) =>
  Array.from({ length: count }, (_, i) => `a${i}: catalogProducts(catalogId: "${id}")`).join(' ');

/** Runs `step` after `ms` unless the response was closed first, so no timer outlives a test. */
function later(res: ServerResponse, ms: number, step: () => void): void {
  const timer = setTimeout(step, ms);
  res.once('close', () => clearTimeout(timer));
}

/** The misbehaviours of the fault tables; each is a handler. */
export const faults = {
  ok: echo,
  status:
    (status: number, body = '', headers: Record<string, string> = {}): UpstreamHandler =>
    (_req, res) =>
      res.writeHead(status, { ...json, ...headers }).end(body),
  slowHeaders:
    (ms: number): UpstreamHandler =>
    (req, res) =>
      later(res, ms, () => echo(req, res)),
  /** Headers at once, then one byte of whitespace every 100 ms, never the end. */
  slowBody: ((_req, res) => {
    res.writeHead(200, json).write('{"data":[');
    const timer = setInterval(() => res.write(' '), 100);
    res.once('close', () => clearInterval(timer));
  }) as UpstreamHandler,
  /** Half of the announced body, then silence. */
  stalledMidBody: ((_req, res) => {
    res.writeHead(200, { ...json, 'content-length': '1000' }).write('{"data":[');
  }) as UpstreamHandler,
  /** Half of the announced body, then a TCP reset. */
  resetMidBody: ((req, res) => {
    res.writeHead(200, { ...json, 'content-length': '1000' }).write('{"data":[');
    later(res, 20, () => req.socket.resetAndDestroy());
  }) as UpstreamHandler,
  /** A valid JSON body of about `bytes`, written in 64 KiB chunks. */
  oversized:
    (bytes: number): UpstreamHandler =>
    (_req, res) => {
      res.writeHead(200, json);
      const chunk = `{"pad":"${'x'.repeat(65_536)}"},`;
      res.write('{"data":[');
      for (let sent = 0; sent < bytes && !res.destroyed; sent += chunk.length) res.write(chunk);
      res.end('{}]}');
    },
  /** The n-th request gets the n-th handler; the last one repeats. */
  sequence:
    (...handlers: UpstreamHandler[]): UpstreamHandler =>
    (req, res, attempt) =>
      handlers[Math.min(attempt ?? 0, handlers.length - 1)]!(req, res, attempt),
};

/**
 * A real HTTP server on 127.0.0.1 (port 0 unless given) that records every request, answers with
 * `handler`, and counts the connections it has open and saw closed.
 */
export async function startUpstream(handler: UpstreamHandler = echo, port = 0) {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let current = handler;
  let closedSockets = 0;
  const respond = (next: UpstreamHandler) => {
    current = next;
    requests.length = 0;
  };
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, at: Date.now() });
    current(req, res, requests.length - 1);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => (sockets.delete(socket), closedSockets++));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    port: address.port,
    requests,
    get closedSockets() {
      return closedSockets;
    },
    get openSockets() {
      return sockets.size;
    },
    /** Answers the following requests with `next`, and starts a fresh recording. */
    respond,
    /** Back to the first handler, with a fresh recording. */
    reset: () => respond(handler),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export type Upstream = Awaited<ReturnType<typeof startUpstream>>;
