import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { answerClientError, answerConnect } from './client-errors.ts';
import { createDrain } from './drain.ts';
import { INVALIDATION_PATH } from './invalidate.ts';
import { refusalBody, refusalHeaders } from '../errors.ts';
import { hostMissingOrTwice, oneHeaderMessage } from './request-head.ts';

/** A scrape's answer: the registry in Prometheus text format. */
export interface MetricsText {
  contentType: string;
  body: string;
}

/** The metrics listener, with the shutdown of its requests under way. */
export interface MetricsServer extends Server {
  /**
   * Stops accepting and closes idle connections; a scrape or purge under way is answered within `graceMs`,
   * then whatever is left is cut.
   */
  drain(graceMs: number): Promise<void>;
}

/**
 * A second, small listener that serves only the app's metrics at `path` (METRICS_PORT), so the
 * scrape endpoint need not be reachable where GraphQL is; and POST /cache/invalidate when given
 * `invalidate`, so that operators' endpoint stays off the public port too.
 */
export function createMetricsServer(
  metrics: () => Promise<MetricsText>,
  path: string,
  invalidate?: (req: IncomingMessage, res: ServerResponse) => void,
): MetricsServer {
  // A scraper sends small requests: short limits keep a slow or idle client from holding a socket.
  const options = {
    headersTimeout: 5_000,
    requestTimeout: 10_000,
    connectionsCheckingInterval: 1_000,
    maxHeaderSize: 8_192,
    // Refused below, with the JSON every other refusal has (Node's own 400 for it said nothing).
    requireHostHeader: false,
  };
  const server = createServer(options, (req, res) => {
    requests.track(req, res, undefined);
    if (hostMissingOrTwice(req)) return refuse(res, 400, oneHeaderMessage('host'));
    if (invalidate && (req.url ?? '/').split('?')[0] === INVALIDATION_PATH) return invalidate(req, res);
    const found = (req.url ?? '/').split('?')[0] === path && (req.method === 'GET' || req.method === 'HEAD');
    if (!found) return refuse(res, 404, `Nothing is served here; metrics are at ${path}`);
    void metrics().then(
      ({ contentType, body }) =>
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body),
      // A scraper needs to know only that this scrape failed, not the collector's internals.
      () => refuse(res, 500, 'The metrics could not be collected; scrape again'),
    );
  });
  // Malformed HTTP, a head too large or too slow: the same one-line JSON refusals as the main port.
  server.on('clientError', answerClientError);
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    refuse(res, 417, 'Only `Expect: 100-continue` is understood: send the request without Expect'),
  );
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => answerConnect(socket));
  // `Expect: 100-continue`: only the purge, past its token check, asks for the body (invalidate.ts), not Node for all.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => server.emit('request', req, res));
  const requests = createDrain<undefined>(server);
  return Object.assign(server, { drain: requests.drain });
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, refusalHeaders);
  res.end(refusalBody(status, message));
}
