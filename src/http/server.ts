import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { App } from '../app.ts';

/** node:http limits and the shutdown grace; every field has a default. */
export interface HttpOptions {
  /** Largest request body; bigger declared bodies get 413 before any byte is read. @default 65536 */
  maxBodyBytes?: number;
  /** Largest request head (Node's option); bigger gets 431. @default 16384 */
  maxHeaderBytes?: number;
  /** Time a client has to send the request head: the slowloris bound. @default 10000 */
  headersTimeoutMs?: number;
  /** Time a client has to send the whole request. @default 30000 */
  requestTimeoutMs?: number;
  /** How long an idle keep-alive connection stays open. @default 5000 */
  keepAliveTimeoutMs?: number;
  /** How long shutdown waits for requests in flight before closing their connections. @default 10000 */
  shutdownGraceMs?: number;
}

export interface ServerOptions extends HttpOptions {
  /** Other routes served before GraphQL (the bundled demo); returns true when it answered. */
  routes?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface FacadeServer extends Server {
  /** Stops accepting, lets requests in flight finish within the grace period, then closes the app. */
  shutdown(): Promise<void>;
}

const bodyless = new Set(['GET', 'HEAD', 'OPTIONS']);
// A host name or IPv4 address, or an IPv6 literal in brackets, with an optional port (RFC 9110 §7.2).
const hostPattern = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The node:http server around the app: hardened timeouts and sizes, a request body limit,
 * `/health` (the process answers) and `/readiness` (the upstream answers and the breaker is
 * closed). `app` may be a getter for an app created once the port is known.
 */
export function createServer(app: App | (() => App | undefined), options: ServerOptions = {}): FacadeServer {
  const {
    maxBodyBytes = 65_536,
    maxHeaderBytes = 16_384,
    headersTimeoutMs = 10_000,
    requestTimeoutMs = 30_000,
    keepAliveTimeoutMs = 5_000,
    shutdownGraceMs = 10_000,
    routes,
  } = options;
  const current = typeof app === 'function' ? app : () => app;
  let inFlight = 0;
  let drained: (() => void) | undefined;

  const server = createHttpServer(
    {
      maxHeaderSize: maxHeaderBytes,
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // Node checks those two timeouts only this often (30 s by default), which would blunt them.
      connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
    },
    (req, res) => {
      inFlight++;
      res.once('close', () => {
        if (--inFlight === 0) drained?.();
      });
      // Every handler below builds a URL from Host; a malformed one would throw with a stack.
      if (!hostPattern.test(req.headers.host ?? 'localhost')) {
        return void send(res, 400, { errors: [{ message: messages[400] }] }, true);
      }
      const path = (req.url ?? '/').split('?')[0];
      if (path === '/health') return void send(res, 200, { status: 'ok' });
      const facade = current();
      if (path === '/readiness') {
        if (!facade) return void send(res, 503, { status: 'starting' });
        return void facade
          .ready()
          .then((ready) => send(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unready' }));
      }
      if (routes?.(req, res)) return;
      if (!facade) return void send(res, 503, { status: 'starting' });
      const refusal = bodyRefusal(req, maxBodyBytes);
      if (refusal) return void send(res, refusal, { errors: [{ message: messages[refusal] }] }, true);
      void facade.yoga(req, res);
    },
  ) as FacadeServer;
  server.keepAliveTimeout = keepAliveTimeoutMs;

  server.shutdown = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    if (inFlight > 0) {
      const grace = new Promise<void>((resolve) => setTimeout(resolve, shutdownGraceMs).unref());
      await Promise.race([new Promise<void>((resolve) => (drained = resolve)), grace]);
    }
    // Whatever is still open after the grace period (or idle after its answer) is cut.
    server.closeAllConnections();
    await closed;
    await current()?.close();
  };
  return server;
}

const messages: Record<number, string> = {
  400: 'The Host header is not a valid host',
  411: 'A request body needs a Content-Length header',
  413: 'The request body is too large',
};

/** 411 or 413 when a request's body is unknown in size or too big; Node enforces Content-Length framing. */
function bodyRefusal(req: IncomingMessage, maxBodyBytes: number): 411 | 413 | undefined {
  if (bodyless.has(req.method ?? 'GET')) return undefined;
  const length = req.headers['content-length'];
  if (length === undefined) return req.headers['transfer-encoding'] ? 411 : undefined;
  return Number(length) > maxBodyBytes ? 413 : undefined;
}

function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    // The unread body would otherwise be parsed as the next request on this connection.
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(JSON.stringify(body));
}
