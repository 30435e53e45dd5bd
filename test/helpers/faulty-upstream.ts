import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const json = { 'content-type': 'application/json' };
const envelope = (url: string | undefined) => JSON.stringify({ status: 200, meta: {}, data: [{ url }] });

/** Runs `step` after `ms` unless the response was closed first, so no timer outlives a test. */
function later(res: ServerResponse, ms: number, step: () => void): void {
  const timer = setTimeout(step, ms);
  res.once('close', () => clearTimeout(timer));
}

/** The misbehaviours of the fault table; each is a request handler. */
export const faults = {
  ok: ((req, res) => res.writeHead(200, json).end(envelope(req.url))) as Handler,
  status:
    (status: number, body = '', headers: Record<string, string> = {}): Handler =>
    (_req, res) =>
      res.writeHead(status, { ...json, ...headers }).end(body),
  slowHeaders:
    (ms: number): Handler =>
    (req, res) =>
      later(res, ms, () => res.writeHead(200, json).end(envelope(req.url))),
  /** Headers at once, then one byte of whitespace every 100 ms, never the end. */
  slowBody: ((_req, res) => {
    res.writeHead(200, json).write('{"data":[');
    const timer = setInterval(() => res.write(' '), 100);
    res.once('close', () => clearInterval(timer));
  }) as Handler,
  /** Half of the announced body, then silence. */
  stalledMidBody: ((_req, res) => {
    res.writeHead(200, { ...json, 'content-length': '1000' }).write('{"data":[');
  }) as Handler,
  /** Half of the announced body, then a TCP reset. */
  resetMidBody: ((req, res) => {
    res.writeHead(200, { ...json, 'content-length': '1000' }).write('{"data":[');
    later(res, 20, () => req.socket.resetAndDestroy());
  }) as Handler,
  /** A valid JSON body of about `bytes`, written in 64 KiB chunks. */
  oversized:
    (bytes: number): Handler =>
    (_req, res) => {
      res.writeHead(200, json);
      const chunk = `{"pad":"${'x'.repeat(65_536)}"},`;
      res.write('{"data":[');
      for (let sent = 0; sent < bytes && !res.destroyed; sent += chunk.length) res.write(chunk);
      res.end('{}]}');
    },
  /** The n-th request gets the n-th handler; the last one repeats. */
  sequence:
    (...handlers: Handler[]): Handler =>
    (req, res) => {
      const index = Number(req.headers['x-attempt-index'] ?? 0);
      handlers[Math.min(index, handlers.length - 1)]!(req, res);
    },
};

/**
 * A recording HTTP upstream on 127.0.0.1 (port 0 or a given port) whose behaviour is set per
 * test, that also counts the connections it saw closed.
 */
export async function startFaultyUpstream(handler: Handler = faults.ok, port = 0) {
  const requests: Array<{ url: string; at: number }> = [];
  const sockets = new Set<Socket>();
  let current = handler;
  let closedSockets = 0;
  const server = createServer((req, res) => {
    // Lets `faults.sequence` pick a handler by the attempt number.
    req.headers['x-attempt-index'] = String(requests.length);
    requests.push({ url: req.url ?? '', at: Date.now() });
    current(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closedSockets++;
    });
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
    respond(next: Handler) {
      current = next;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export type FaultyUpstream = Awaited<ReturnType<typeof startFaultyUpstream>>;

/** A port nothing listens on (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const probe = await startFaultyUpstream();
  await probe.close();
  return probe.port;
}
