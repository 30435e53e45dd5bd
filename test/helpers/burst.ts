import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';
import type { UpstreamHandler } from './upstream.ts';

/** One operation of `count` aliased fields, each a distinct upstream call whose id starts with `prefix`. */
export const aliasedCalls = (prefix: string, count: number) =>
  `{ ${Array.from({ length: count }, (_, i) => `f${i}: classificationGroups(classificationId: "${prefix}-${i}")`).join(' ')} }`;

export interface TimedAnswer {
  /** Time from sending the request to reading its whole body. */
  ms: number;
  body: { data?: Record<string, unknown>; errors?: Array<{ message: string; extensions: { code: string } }> };
}

/** POSTs one query to the façade at `origin` and times the answer, for the fairness tests. */
export async function postTimed(
  origin: string,
  query: string,
  headers: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<TimedAnswer> {
  const started = Date.now();
  const response = await fetch(`${origin}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
    signal,
  });
  const body = (await response.json()) as TimedAnswer['body'];
  return { ms: Date.now() - started, body };
}

/**
 * Wraps `handler` to count the calls in flight: all of them (`peak`, the most at once) and by
 * `group(req)` (`peaks`, the most of each group at once; a call of no group is not counted there).
 */
export function countInFlight(group: (req: IncomingMessage) => string | undefined, handler: UpstreamHandler) {
  const inFlight = new Map<string, number>();
  const peaks = new Map<string, number>();
  let open = 0;
  let peak = 0;
  const counted: UpstreamHandler = (req, res, attempt) => {
    peak = Math.max(peak, ++open);
    res.once('close', () => open--);
    const name = group(req);
    if (name !== undefined) {
      inFlight.set(name, (inFlight.get(name) ?? 0) + 1);
      peaks.set(name, Math.max(peaks.get(name) ?? 0, inFlight.get(name)!));
      res.once('close', () => inFlight.set(name, inFlight.get(name)! - 1));
    }
    handler(req, res, attempt);
  };
  return {
    handler: counted,
    peaks,
    get peak() {
      return peak;
    },
  };
}

/** A POST whose head is complete but whose body never ends (`more`: other headers): in flight from its head. */
export function heldPost(port: number, key: string, more: Record<string, string> = {}): Promise<Socket> {
  const lines = Object.entries(more).map(([name, value]) => `${name}: ${value}\r\n`);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100\r\nX-API-KEY: ${key}\r\n${lines.join('')}\r\n{"query":`,
      );
      resolve(socket);
    });
    socket.on('error', () => undefined).once('error', reject);
  });
}

/** Sends one whole POST (`body`, JSON) on a raw socket and never reads the answer: a client that stopped reading. */
export function unreadPost(port: number, body: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /graphql HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => undefined).once('error', reject);
    onTestFinished(() => void socket.destroy());
  });
}

/** Writes `head` (a request, its body cut short) and holds the connection open: what the server sent until it closed. */
export function untilServerCloses(port: number, head: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    onTestFinished(() => void socket.destroy());
    let text = '';
    socket.on('data', (chunk) => (text += chunk)).on('error', () => undefined);
    socket.once('close', () => resolve(text));
  });
}

/** POSTs `query` to `url` with `headers`; `abort()` makes its client leave, and `left` then says 'cancelled'. */
export function cancellablePost(url: string, query: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const left = fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  }).catch(() => 'cancelled');
  return { left, abort: () => controller.abort() };
}
