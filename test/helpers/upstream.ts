import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the upstream saw of one request: the raw request-target, exactly as sent on the wire. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

export type UpstreamHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** Answers 200 with an envelope that echoes the request-target, so tests can tell bodies apart. */
export const echo: UpstreamHandler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ status: 200, meta: { languageId: null }, data: [{ url: req.url }] }));
};

/** A real HTTP server on 127.0.0.1:0 that records every request and answers with `handler`. */
export async function startUpstream(handler: UpstreamHandler = echo) {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let current = handler;
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    current(req, res);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    /** Replaces the handler for the following requests. */
    respond(next: UpstreamHandler) {
      current = next;
    },
    reset() {
      requests.length = 0;
      current = handler;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export type Upstream = Awaited<ReturnType<typeof startUpstream>>;
