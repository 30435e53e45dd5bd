import { randomUUID } from 'node:crypto';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { clip, describeOperation } from '../../plugins/operation.ts';
import { requestSlot } from '../../plugins/request-slot.ts';

const ids = requestSlot<string>('request id');
// Only plain tokens are taken from callers: an id ends up in logs and upstream headers.
const acceptedId = /^[\w.:-]{1,128}$/;

/** The request's id: the caller's `x-request-id` when it is a plain token, else a new UUID. */
export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (id === undefined) {
    const incoming = request.headers.get('x-request-id');
    id = incoming !== null && acceptedId.test(incoming) ? incoming : randomUUID();
    ids.set(request, id);
  }
  return id;
}

/**
 * Echoes the request id in the response and, given a logger, writes one JSON line per request:
 * id, method, path, operations, status and duration ("client went away", without a status, when
 * the client disconnected first). A streamed answer (@defer) whose client leaves after its status
 * went out gets that line too, once. Headers are never logged.
 */
export function useRequestLog({ logger }: { logger?: Logger | undefined } = {}): Plugin {
  const started = requestSlot<{ at: number; path: string; operations: string[]; gone?: true }>('request log');
  // The line's fields are fixed and carry no header, so redaction (half the cost of a line) is off for it.
  const log = logger?.child({}, { redact: [] });
  const fieldsOf = (request: Request, entry: { at: number; path: string; operations: string[] }) => ({
    reqId: requestIdOf(request),
    method: request.method,
    path: entry.path,
    operations: entry.operations,
    durationMs: Math.round(performance.now() - entry.at),
  });
  // A client that left is an outcome of its own, not an error: one info line per request says so.
  const gone = (request: Request) => {
    const entry = started.get(request);
    if (!log || !entry || entry.gone) return;
    entry.gone = true;
    log.info(fieldsOf(request, entry), 'client went away');
  };
  return {
    // Yoga has parsed the URL already: its path is taken here rather than parsed again per line.
    onRequest({ request, url }) {
      started.set(request, { at: performance.now(), path: clip(url.pathname), operations: [] });
    },
    onExecute({ args }) {
      const { type, name } = describeOperation(args.document, args.operationName);
      const { request } = args.contextValue as { request: Request };
      started.get(request)?.operations.push(`${type} ${clip(name)}`);
      return {
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result)) return;
          // Runs when the last part is out, and when the client cancels the stream after its status went out.
          return { onEnd: () => void (request.signal.aborted && gone(request)) };
        },
      };
    },
    onResponse({ request, response }) {
      response.headers.set('x-request-id', requestIdOf(request));
      const entry = started.get(request);
      if (!log || !entry) return;
      // No status was sent to a client that left first.
      if (request.signal.aborted) return gone(request);
      const { durationMs, ...fields } = fieldsOf(request, entry);
      log.info({ ...fields, status: response.status, durationMs }, 'request completed');
    },
  };
}
