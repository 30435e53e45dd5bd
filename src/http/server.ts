import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createDrain } from './drain.ts';
import {
  bodyRefusal,
  codingMessage,
  fragmentMessage,
  createCredentialCheck,
  createHostCheck,
  hostMissingOrTwice,
  isAssetPath,
  isKnownHost,
  messages,
  oneHeaderMessage,
  rankAccept,
  servedAsGet,
  servedByYoga,
  spellMediaType,
  targetMessage,
  toOriginForm,
  unnormalPath,
  type YogaPaths,
} from './request-head.ts';
import { continueIfExpected, INVALIDATION_PATH } from './invalidate.ts';
import { answerClientError, answerConnect } from './client-errors.ts';
import { notServedMessage, refusalBody, refusalHeaders } from '../errors.ts';

/** node:http limits and the shutdown grace; their defaults live in config.ts. */
export interface HttpOptions {
  /** Largest request body of any method; bigger declared bodies get 413 before any byte is read. */
  maxBodyBytes: number;
  /** Largest request head (Node's option); bigger gets 431. */
  maxHeaderBytes: number;
  /** Time a client has to send the request head: the slowloris bound. */
  headersTimeoutMs: number;
  /** Time a client has to send the whole request. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** How long a response may wait on a client that takes none of its bytes before its connection is cut. */
  sendTimeoutMs: number;
  /** Requests served at once; past it a request (other than the probes) gets 503 at once. */
  maxInFlight: number;
  /** Of those, what one credential may hold (`ServedApp.credentialOf`); the rest stay free for the others. */
  maxInFlightPerCredential: number;
  /** The metrics' path when the app serves them on this port: never refused for load, as the probes are not. */
  metricsPath: string | undefined;
  /** How long shutdown waits for requests in flight before closing their connections. */
  shutdownGraceMs: number;
  /** The names a Host may give (`createHostCheck`); empty or absent, any; others get 421. */
  allowedHosts?: readonly string[];
}

/** What the server needs of a finished app; `createApp()`'s result is one. */
export interface ServedApp {
  /** Answers every request the server does not answer itself (Yoga's node:http handler). */
  yoga(req: IncomingMessage, res: ServerResponse): unknown;
  /**
   * The paths `yoga` serves besides the metrics: its endpoint (with a trailing `/` too) and, where GraphiQL is, the
   * files under `assets/`. Any other gets 404 first: Yoga would run GraphQL at any URL ending in its endpoint.
   */
  paths?: YogaPaths;
  /** The headers that name a request's credential (lower case): a request carries each with one value. */
  credentialHeaders?: readonly string[];
  /**
   * The credential a request is served on (a one-way key): its requests in flight count together. A key the PIM has
   * not been seen to accept counts in one share with every other such key.
   */
  credentialOf?(headers: Pick<Headers, 'get'>): string;
  /** Told of each request the server refuses itself (logged and counted there): returns the id to echo. */
  refused?(request: { method: string; path: string; id: string | null }, status: number): string;
  /** The CORS headers (CORS_ORIGINS) of a refusal the server sends itself to a request from `origin`. */
  corsHeaders?(origin: string | undefined): Record<string, string>;
  /** True when the app can serve: answers `/readiness`. */
  ready(): Promise<boolean>;
  /** Releases what the app holds; called once the server has closed. */
  close(): Promise<void>;
  /** Called as the shutdown's grace is about to end: what still waits for the PIM fails now, and is answered. */
  stopWaiting?(): void;
  /** POST /cache/invalidate (CACHE_ADMIN_TOKEN), served here when `port` is `main`. */
  invalidation?: { handle(req: IncomingMessage, res: ServerResponse): void; port: 'main' | 'metrics' } | undefined;
}

export interface FacadeServer extends Server {
  /**
   * Stops accepting, lets requests in flight finish within the grace period, then closes the app once `alongside`
   * (another listener's drain, whose requests use the app too) has settled as well; once.
   */
  shutdown(alongside?: Promise<void>): Promise<void>;
}

// The path of a target as logged, without its query: an absolute-form one (`http://user:password@host/graphql`,
// refused before it is made a path) without its scheme and authority, which may hold a password.
const loggedPath = (target: string) => target.split('?')[0]!.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '') || '/';

// Node joins a repeated header as the Fetch API does (but Set-Cookie, which carries no credential).
const headersOf = (req: IncomingMessage) => ({
  get: (name: string) => (req.headers[name] as string | undefined) ?? null,
});

/**
 * The node:http server around the app: hardened timeouts and sizes, a request body limit,
 * `/health` (the process answers) and `/readiness` (the app says it can serve).
 */
export function createServer(app: ServedApp, options: HttpOptions): FacadeServer {
  const {
    maxBodyBytes,
    maxHeaderBytes,
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs,
    sendTimeoutMs,
    maxInFlight,
    maxInFlightPerCredential,
    metricsPath,
    shutdownGraceMs,
  } = options;
  const namesThisServer = createHostCheck(options.allowedHosts ?? []);
  // Requests in flight per credential, while it has any: never more entries than requests in flight.
  const held = new Map<string, number>();
  // Requests let through to the app and not yet closed: what HTTP_MAX_IN_FLIGHT bounds. Not the drain's open
  // responses, which also hold the server's own answers (refusals, probes): a 503 queued behind a slow answer on a
  // pipelined connection waits there, and would take a slot of the very bound that refused it.
  let serving = 0;
  // What one credential leaves free (the last quarter by default): a second credential beside one holding its whole
  // share (the share of keys not yet seen accepted, which made-up keys fill, is one) may take only half of it there,
  // so whoever holds nothing still gets in. Nothing to leave when one credential may hold it all.
  const reserve = Math.max(0, maxInFlight - maxInFlightPerCredential);
  const reserveShare = Math.max(1, Math.floor(reserve / 2));
  const { paths } = app;
  const twoCredentials = createCredentialCheck(app.credentialHeaders ?? []);
  const notServed = paths ? notServedMessage(paths.graphql) : messages[404]!;

  // Each refusal of the server's own is logged and counted as Yoga's requests are, and echoes the request id.
  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, close = false) => {
    const path = loggedPath(req.url ?? '/');
    const id = app.refused?.({ method: req.method ?? 'GET', path, id: headersOf(req).get('x-request-id') }, status);
    if (id !== undefined) res.setHeader('x-request-id', id);
    // A browser on a listed origin reads the refusal (its code, Retry-After) instead of a network error.
    for (const [name, value] of Object.entries(app.corsHeaders?.(req.headers.origin) ?? {})) res.setHeader(name, value);
    send(res, status, refusalBody(status, message), close);
  };

  const server = createHttpServer(
    {
      maxHeaderSize: maxHeaderBytes,
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      // Node checks those two timeouts only this often (30 s by default), which would blunt them.
      connectionsCheckingInterval: Math.min(1_000, headersTimeoutMs),
      requireHostHeader: false,
    },
    (req, res) => {
      // Each response with its sending's progress, until it closes; a shutdown lets it finish.
      responses.track(req, res, { waiting: 0, since: Date.now() });
      if (hostMissingOrTwice(req)) return void refuse(req, res, 400, oneHeaderMessage('host'), true);
      // Not a path: the absolute form is served as the path it names (below). Any other (`*`, `*@host/x`) would put
      // its text in Yoga's URL before the path, past every check below (`*/metrics`; `*:x/` threw with a stack).
      const absolute = req.url!.charCodeAt(0) !== 47;
      if (absolute && !toOriginForm(req)) return void refuse(req, res, 400, targetMessage, true);
      // Every handler below builds a URL from Host; a malformed one would throw with a stack.
      const host = req.headers.host ?? 'localhost';
      if (!isKnownHost(host)) return void refuse(req, res, 400, messages[400]!, true);
      if (!namesThisServer(host)) return void refuse(req, res, 421, messages[421]!, true);
      // Checked before any route: a body Node would read and throw away is read all the same.
      const refusal = bodyRefusal(req, maxBodyBytes);
      if (refusal) return void refuse(req, res, refusal, messages[refusal]!, true);
      // RFC 9110 §8.4: no body is decoded here, so one in a content coding is refused, not read as it came (a WAF in
      // front that decodes it inspects another body than the one run). §12.5.3: Accept-Encoding names what is taken.
      const coding = req.headers['content-encoding'];
      if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
        res.setHeader('accept-encoding', 'identity');
        return void refuse(req, res, 415, codingMessage, true);
      }
      // A request target never carries a fragment (RFC 9112 §3.2); Yoga's URL parser would drop it, so
      // `/metrics#x` would reach the metrics past a proxy's rule on `/metrics`.
      if (req.url?.includes('#')) return void refuse(req, res, 400, fragmentMessage, true);
      const path = (req.url ?? '/').split('?')[0]!;
      // Yoga's URL parser resolves `.`, `..` (also as %2e, and after `\`) and empty segments: `/x/../metrics`
      // would reach the metrics past a proxy's rule on `/metrics`. Only a path in its normal form is served.
      if (unnormalPath.test(path)) return void refuse(req, res, 404, messages[404]!, true);
      // Nor do the metrics and the purge answer an absolute form, which a proxy's rule on their raw path would not see.
      if (absolute && (path === metricsPath || path === INVALIDATION_PATH)) {
        return void refuse(req, res, 404, notServed, true);
      }
      // A CORS preflight is answered by Yoga's CORS before any work: refused, a browser shows a network error in
      // place of the readable refusal (503, Retry-After) its request would then get, so none is refused for load.
      // Only where CORS names its origin: without CORS_ORIGINS Yoga has no CORS step, and an OPTIONS goes through
      // every plugin (the GraphiQL assets' sends its file whatever the method); an unlisted origin's is of no use.
      const preflight =
        req.method === 'OPTIONS' &&
        req.headers['access-control-request-method'] !== undefined &&
        'access-control-allow-origin' in (app.corsHeaders?.(req.headers.origin) ?? {});
      // The probes, the metrics and GraphiQL's files read; any other method on them is refused as on the endpoint
      // (but a CORS preflight of GraphiQL's files).
      const asset = !!paths && isAssetPath(path, paths);
      const read = path === '/health' || path === '/readiness' || path === metricsPath || asset;
      if (read && req.method !== 'GET' && req.method !== 'HEAD' && !(asset && preflight)) {
        res.setHeader('allow', 'GET, HEAD');
        return void refuse(req, res, 405, `${path} answers GET and HEAD`);
      }
      if (path === '/health') return void send(res, 200, { status: 'ok' });
      if (path === INVALIDATION_PATH && app.invalidation?.port === 'main') return app.invalidation.handle(req, res);
      if (path === '/readiness') {
        return void app.ready().then((ready) => send(res, ready ? 200 : 503, { status: ready ? 'ready' : 'unready' }));
      }
      if (path === metricsPath) return void passOn(req, res);
      // Yoga runs GraphQL at any URL ending in its endpoint (`/v1/graphql`, `/metrics?x=/graphql`), and its own
      // health check at any ending in `/health`, whatever the method: past a proxy's rules on those paths.
      if (paths && !servedByYoga(path, paths)) return void refuse(req, res, 404, notServed);
      // Yoga refused HEAD with 405. The response was made for a HEAD: node:http sends the head Yoga writes, no body.
      if (req.method === 'HEAD') servedAsGet(req);
      if (preflight) return void passOn(req, res);
      // Two values of a credential header leave who is asking to whoever reads them.
      const twice = twoCredentials(req);
      if (twice !== undefined) return void refuse(req, res, 400, oneHeaderMessage(twice), true);
      // Each request held costs memory for up to its whole budget: past the bound, refuse before any work.
      // One credential may not take it all: its requests wait out their budget in its own queue share, and
      // other callers, who the fair queue would serve, must still get in.
      const credential = app.credentialOf?.(headersOf(req));
      const holding = credential === undefined ? 0 : (held.get(credential) ?? 0);
      const reserved = serving >= maxInFlight - reserve && holding >= reserveShare;
      if (serving >= maxInFlight || holding >= maxInFlightPerCredential || reserved) {
        res.setHeader('retry-after', '1');
        return void refuse(req, res, 503, messages[503]!);
      }
      serving++;
      if (credential !== undefined) held.set(credential, holding + 1);
      // One listener for both counts: each listener on a response is paid for on every request.
      res.once('close', () => {
        serving--;
        if (credential === undefined) return;
        const left = held.get(credential)! - 1;
        if (left > 0) held.set(credential, left);
        else held.delete(credential);
      });
      void passOn(req, res);
    },
  ) as FacadeServer;
  // The app is given the request: a client waiting on `Expect: 100-continue` is asked for its body now, not before.
  const passOn = (req: IncomingMessage, res: ServerResponse) => {
    continueIfExpected(req, res);
    spellMediaType(req);
    rankAccept(req);
    return app.yoga(req, res);
  };
  server.keepAliveTimeout = keepAliveTimeoutMs;
  // An answer its client does not read waits in this process's memory (the upstream bytes behind it
  // count toward PIM_MAX_INFLIGHT_BYTES until it is out): a send that stalls for sendTimeoutMs is cut.
  const responses = createDrain<Progress>(server);
  const stalls = setInterval(
    () => cutStalled(responses.open, sendTimeoutMs),
    Math.min(1_000, sendTimeoutMs / 2),
  ).unref();
  server.once('close', () => clearInterval(stalls));
  // A refusal of node:http's own to a request whose head it read (408, a body too slow) names a listed origin too.
  // One whose head it could not read is logged and counted as the server's own refusals are, its method and path `-`.
  const refusedUnread = (req?: IncomingMessage) => (status: number) =>
    void app.refused?.(
      { method: req?.method ?? '-', path: req?.url === undefined ? '-' : loggedPath(req.url), id: null },
      status,
    );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, (req) => app.corsHeaders?.(req.headers.origin) ?? {}, refusedUnread()),
  );
  server.on('connect', (req: IncomingMessage, socket: Duplex) => answerConnect(socket, refusedUnread(req)));
  // `Expect: 100-continue`: Node would send 100 Continue before any check here, asking for a body the server then
  // refuses (413, 503, 401). The request goes the usual way and the 100 goes out only when it is passed on; a refusal
  // comes in its place, and Node closes the connection after it (the client may or may not send its body).
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  // An Expect other than 100-continue (which Node answers itself): Node's own 417 would carry no JSON, code or id.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    refuse(req, res, 417, messages[417]!, true),
  );

  // A second signal (SIGINT after SIGTERM) joins the shutdown under way: the app closes once, after both drains.
  let shutdown: Promise<void> | undefined;
  server.shutdown = (alongside) =>
    (shutdown ??= Promise.all([responses.drain(shutdownGraceMs, app.stopWaiting), alongside]).then(() => app.close()));
  return server;
}

/** The bytes of a response still waiting to reach the kernel at the last look, and since when none have. */
interface Progress {
  waiting: number;
  since: number;
}

// libuv's queue of a write under way: one large chunk goes out in parts, which only this count shows.
type WithWriteQueue = Socket & { _handle?: { writeQueueSize?: number } | null };

function cutStalled(open: Map<ServerResponse, Progress>, sendTimeoutMs: number): void {
  const now = Date.now();
  for (const [res, progress] of open) {
    const socket = res.socket as WithWriteQueue | null;
    const waiting = socket ? socket.writableLength + (socket._handle?.writeQueueSize ?? 0) : 0;
    // Nothing waiting (the answer is still being worked out), or fewer bytes than before: not stalled.
    if (waiting === 0 || waiting < progress.waiting) progress.since = now;
    else if (now - progress.since >= sendTimeoutMs) socket!.destroy();
    progress.waiting = waiting;
  }
}

function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  res.writeHead(status, {
    ...refusalHeaders,
    // The unread body would otherwise be parsed as the next request on this connection.
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}
