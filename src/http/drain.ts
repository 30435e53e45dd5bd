import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// How long the responses cut at the end of the grace may take to close (each with its socket, a turn later).
const CUT_CLOSE_MS = 500;
// Before the grace ends, the time left to the requests whose waiting was stopped (`lastCall`) to be answered: their
// fields fail at once, then the result is written (at most a quarter of the grace).
const LAST_CALL_MS = 1_000;

/** A listener's responses under way, and the shutdown that lets them finish. */
export interface Drain<T> {
  /** Responses not yet closed, with what the listener keeps for each. */
  readonly open: Map<ServerResponse, T>;
  /** Counts `res` until it closes; once draining, its connection closes after it. */
  track(req: IncomingMessage, res: ServerResponse, value: T): void;
  /**
   * Stops accepting and closes idle connections; responses under way are answered (their connections closed
   * after them) within `graceMs`, then whatever is left is cut. Shortly before that, `lastCall` is called, for what
   * still waits to give up and be answered. Resolves once the listener has closed.
   */
  drain(graceMs: number, lastCall?: () => void): Promise<void>;
}

/** The drain of `server`: each of its requests goes through `track`. */
export function createDrain<T>(server: Server): Drain<T> {
  const open = new Map<ServerResponse, T>();
  // Once draining, the latest response of each connection. A pipelined request's response waits in Node's queue behind
  // the one before it, and only the last may say `Connection: close`: Node ends the connection after that one, and the
  // responses behind it with it, unanswered.
  const latest = new Map<Socket, ServerResponse>();
  // The responses told `Connection: close` here: taken back if a later request comes on their connection before it.
  const closers = new WeakSet<ServerResponse>();
  const closeAfter = (res: ServerResponse) => {
    res.setHeader('connection', 'close');
    closers.add(res);
  };
  let closing = false;
  let drained: (() => void) | undefined;
  return {
    open,
    track(req, res, value) {
      open.set(res, value);
      res.once('close', () => {
        open.delete(res);
        // A response whose headers went out before shutdown left its own connection kept alive: end
        // that one once it is idle. Not every idle connection: one just accepted may carry a request
        // not yet parsed, which a client has already sent and would see reset.
        if (closing) {
          if (latest.get(req.socket) === res) latest.delete(req.socket);
          setImmediate(() => endIfIdle(req.socket));
        }
        if (open.size === 0) drained?.();
      });
      // A client told to close opens no further request here, so none is cut at the end of the grace.
      if (closing) {
        const before = latest.get(req.socket);
        if (before && closers.has(before) && !before.headersSent) before.removeHeader('connection');
        latest.set(req.socket, res);
        closeAfter(res);
      }
    },
    async drain(graceMs, lastCall) {
      closing = true;
      for (const res of open.keys()) latest.set(res.req.socket, res);
      for (const res of latest.values()) if (!res.headersSent) closeAfter(res);
      // Stops listening and closes the connections kept alive with no request on them (Node >= 19 does both).
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Until every response has closed, or `ms` have passed.
      const closedWithin = (ms: number) =>
        open.size === 0
          ? undefined
          : Promise.race([
              new Promise<void>((resolve) => (drained = resolve)),
              new Promise<void>((resolve) => setTimeout(resolve, ms).unref()),
            ]);
      const last = lastCall ? Math.min(LAST_CALL_MS, graceMs / 4) : 0;
      await closedWithin(graceMs - last);
      if (lastCall && open.size > 0) {
        lastCall();
        await closedWithin(last);
      }
      // Whatever is still open after the grace period (or idle after its answer) is cut.
      server.closeAllConnections();
      // A cut response closes with its socket, a turn after the listener: until then its operation does not know its
      // client is gone, and the app closing now would fail its upstream calls as the PIM's fault (a warn line, an
      // UPSTREAM_ERROR counted, its line `request completed` 200). Bounded, should one never close.
      await closedWithin(CUT_CLOSE_MS);
      await closed;
    },
  };
}

// Node keeps the response it is writing on `_httpMessage`; none means no request is in progress.
function endIfIdle(socket: Socket): void {
  if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage && !socket.destroyed) socket.end();
}
