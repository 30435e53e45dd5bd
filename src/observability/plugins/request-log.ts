import { randomUUID } from 'node:crypto';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { describeOperation } from '../../plugins/operation.ts';

const ids = new WeakMap<Request, string>();
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
 * the client disconnected first). Headers are never logged.
 */
export function useRequestLog({ logger }: { logger?: Logger | undefined } = {}): Plugin {
  const started = new WeakMap<Request, { at: number; path: string; operations: string[] }>();
  // The line's fields are fixed and carry no header, so redaction (half the cost of a line) is off for it.
  const log = logger?.child({}, { redact: [] });
  return {
    // Yoga has parsed the URL already: its path is taken here rather than parsed again per line.
    onRequest({ request, url }) {
      started.set(request, { at: performance.now(), path: url.pathname, operations: [] });
    },
    onExecute({ args }) {
      const { type, name } = describeOperation(args.document, args.operationName);
      started.get((args.contextValue as { request: Request }).request)?.operations.push(`${type} ${name}`);
    },
    onResponse({ request, response }) {
      const reqId = requestIdOf(request);
      response.headers.set('x-request-id', reqId);
      const entry = started.get(request);
      if (!log || !entry) return;
      const durationMs = Math.round(performance.now() - entry.at);
      const fields = { reqId, method: request.method, path: entry.path, operations: entry.operations };
      // A client that left is an outcome of its own, not an error: no status was sent, one line says so.
      if (request.signal.aborted) return void log.info({ ...fields, durationMs }, 'client went away');
      log.info({ ...fields, status: response.status, durationMs }, 'request completed');
    },
  };
}
