import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { refusalBody, refusalHeaders } from '../errors.ts';

// What node:http refuses before any handler runs, by its error code; anything else is malformed HTTP.
const refusals: Record<string, [status: number, message: string]> = {
  // Node cannot tell a long URL from long headers here: both are its one head limit (HTTP_MAX_HEADER_BYTES).
  HPE_HEADER_OVERFLOW: [
    431,
    'The request head (URL and headers) is too large; send a long query as a POST body, and fewer or shorter headers',
  ],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'The chunk extensions are too large; send the body without them'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request did not arrive in time; send it whole, without pauses'],
};
const malformed: [number, string] = [400, 'The request is not valid HTTP/1.1'];

// The responses node:http ended with a refusal of its own while the app was reading their request (a body too
// slow: 408), by status: their client did not go away, it was answered.
const answeredHere = new WeakMap<object, number>();

/** The status node:http refused `serverContext`'s request with while the app read it, if it did. */
export const refusedByServer = (serverContext: unknown): number | undefined =>
  answeredHere.get((serverContext as { res?: object } | undefined)?.res ?? answeredHere);

/**
 * node:http's `clientError` listener: the refusal Node itself would send (400, 408, 413, 431),
 * with a one-line JSON message like every other refusal, then the connection closed.
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  headersOf?: (req: IncomingMessage) => Record<string, string>,
  refused?: (status: number) => void,
): void {
  // As Node's own handler: nothing for a peer that is gone, nor into a response already under way.
  const current = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || current?.headersSent) return void socket.destroy();
  const [status, message] = refusals[error.code ?? ''] ?? malformed;
  if (current) answeredHere.set(current, status);
  // A request whose head was read (a body too slow: 408) gets the headers its head earns (CORS); a head not read, none.
  const extra = current?.req && headersOf ? Object.entries(headersOf(current.req)).map(([n, v]) => `${n}: ${v}`) : [];
  // A head not read (too large: 431; not HTTP: 400) is no request Yoga logs and counts: `refused` is told of it.
  if (!current) refused?.(status);
  refuseOnSocket(socket, status, message, extra);
}

/** node:http's `connect` listener: without one, Node drops a CONNECT request without an answer. */
export function answerConnect(socket: Duplex, refused?: (status: number) => void): void {
  refused?.(405);
  refuseOnSocket(socket, 405, 'CONNECT is not served here; send GET, HEAD or POST', ['allow: GET, HEAD, POST']);
}

// The parser cannot go on after this: the rest of the connection is discarded once the answer is out.
function refuseOnSocket(socket: Duplex, status: number, message: string, headers: string[] = []): void {
  const body = refusalBody(status, message);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    ...Object.entries(refusalHeaders).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...headers,
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`, () => socket.destroy());
}
