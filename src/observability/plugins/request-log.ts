import { randomUUID } from 'node:crypto';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import { plainLines } from '../../logger.ts';
import type { ServerResponse } from 'node:http';
import {
  clip,
  describeOperation,
  errorsOf,
  serializedLater,
  whenSent,
  type ResultPart,
} from '../../plugins/operation.ts';
import { refusedCode } from '../../plugins/refusal-messages.ts';
import { requestSlot } from '../../plugins/request-slot.ts';
import { refusedByServer } from '../../http/client-errors.ts';
import { sentMethod } from '../../http/request-head.ts';
import { refusalCode } from '../../errors.ts';

const ids = requestSlot<string>('request id');
// Only plain tokens are taken from callers: an id ends up in logs and upstream headers.
const acceptedId = /^[\w.:-]{1,128}$/;

/** The request's id: the caller's `x-request-id` when it is a plain token, else a new UUID. */
export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (id === undefined) ids.set(request, (id = idFrom(request.headers.get('x-request-id'))));
  return id;
}

const idFrom = (incoming: string | null) => (incoming !== null && acceptedId.test(incoming) ? incoming : randomUUID());

/** A request the HTTP server refused before Yoga saw it (http/server.ts): what its log line says of it. */
export interface RefusedRequest {
  method: string;
  path: string;
  /** Its `x-request-id` header. */
  id: string | null;
}

/**
 * The lines of a request answered outside Yoga (the HTTP server's refusals, POST /cache/invalidate), as Yoga's
 * requests have them: `line` writes `request completed` and returns the id its answer echoes.
 */
export function createRefusalLog(logger: Logger | undefined) {
  const log = logger?.child({}, { redact: [] });
  const completed = log && plainLines(log, 'info', 'request completed');
  return {
    /** `errorCode`: the code of the refusal's one error, for an answer that is one. */
    line: ({ method, path, id }: RefusedRequest, status: number, durationMs = 0, errorCode?: string): string => {
      const reqId = idFrom(id);
      const line = { reqId, method, path: clip(path), operations: [], status, durationMs };
      completed?.(errorCode === undefined ? line : { ...line, errors: 1, errorCode });
      return reqId;
    },
    /** Its client left before the answer was out. */
    gone: ({ method, path, id }: RefusedRequest) =>
      log?.info({ reqId: idFrom(id), method, path: clip(path), operations: [] }, 'client went away'),
  };
}

/** The id of a request answered outside Yoga: its caller's `x-request-id` when that is a plain token, else a new one. */
export const requestIdFrom = idFrom;

/** What the line of one request collects until it is written. */
interface Entry {
  at: number;
  method: string;
  path: string;
  operations: string[];
  /** A streamed answer (@defer): its line waits for the last part, with the status kept here meanwhile. */
  streamed?: true;
  status?: number;
  ended?: true;
  gone?: true;
  /** A whole result's parts, whose errors are read once they are sent (a refusal may be sent in their place). */
  parts?: readonly ResultPart[];
  /** Every part of the whole result was serialized. */
  serialized?: true;
  /** A whole result sent to a client taking only streams: its line waits for its serialization (maybe a refusal). */
  late?: true;
  /** The errors sent so far (a stream's parts add up), and the first one's code. */
  errors?: number;
  errorCode?: string;
}

/** Adds the errors of one part its client was sent to the line's count; the first one sent names the code. */
function tally(entry: Entry, errors: ReturnType<typeof errorsOf>) {
  if (errors.length === 0) return;
  entry.errorCode ??= String(errors[0]!.extensions?.['code'] ?? 'UNKNOWN');
  entry.errors = (entry.errors ?? 0) + errors.length;
}

/**
 * Echoes the request id in the response and, given a logger, writes one JSON line per request:
 * id, method, path, operations, status, duration, and for an answer with errors how many its client
 * was sent and the first one's code ("client went away", without a status, when
 * the client disconnected first). A streamed answer (@defer) gets its line when the last part is
 * out, so its duration is the whole answer's; if its client left after the status went out, a
 * "client went away" line follows. Headers are never logged.
 */
export function useRequestLog({ logger }: { logger?: Logger | undefined } = {}): Plugin {
  const started = requestSlot<Entry>('request log');
  // The line's fields are fixed and carry no header, so redaction (half the cost of a line) is off for it.
  const log = logger?.child({}, { redact: [] });
  const completedLine = log && plainLines(log, 'info', 'request completed');
  const fieldsOf = (request: Request, entry: Entry) => ({
    reqId: requestIdOf(request),
    method: entry.method,
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
  // The fields of fieldsOf with the status before the duration, built once rather than copied twice.
  const completed = (request: Request, entry: Entry, status: number) => {
    const line = {
      reqId: requestIdOf(request),
      method: entry.method,
      path: entry.path,
      operations: entry.operations,
      status,
      durationMs: Math.round(performance.now() - entry.at),
    };
    const { errors, errorCode } = entry;
    completedLine!(errors === undefined ? line : { ...line, errors, errorCode });
  };
  // A whole result serialized after its status went out (see onResponse): its line, with the errors sent.
  const lateSent = (request: Request) => {
    const entry = started.get(request);
    if (!entry?.late) return;
    delete entry.late;
    for (const part of entry.parts ?? []) tally(entry, errorsOf(part));
    completed(request, entry, entry.status!);
  };
  // The last part of a stream is out, or its client cancelled it after the status went out.
  const streamEnded = (request: Request) => {
    const entry = started.get(request);
    if (!log || !entry) return;
    entry.ended = true;
    if (entry.status === undefined) return;
    completed(request, entry, entry.status);
    if (request.signal.aborted) gone(request);
  };
  return {
    // Yoga has parsed the URL already: its path is taken here rather than parsed again per line.
    onRequest({ request, url, serverContext }) {
      const method = sentMethod(serverContext, request.method);
      started.set(request, { at: performance.now(), method, path: clip(url.pathname), operations: [] });
    },
    onExecute({ args }) {
      const { type, name } = describeOperation(args.document, args.operationName);
      const { request } = args.contextValue as { request: Request };
      const entry = started.get(request);
      entry?.operations.push(`${type} ${clip(name)}`);
      return {
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result) || !entry) return;
          entry.streamed = true;
          return { onEnd: () => streamEnded(request) };
        },
      };
    },
    // Masked: the codes its client sees.
    onResultProcess({ request, result, setResult }) {
      const entry = log && started.get(request);
      if (!entry) return;
      if (!isAsyncIterable(result)) {
        const parts = (entry.parts = Array.isArray(result) ? result : [result]);
        // Serialized after the status for a client taking only streams: what it was sent is known only then, once every
        // part of a batch is (the first one serialized says nothing of the refusal a later one may be sent instead).
        const done = () => {
          entry.serialized = true;
          if (entry.late) lateSent(request);
        };
        // Most results are one part: no set to keep for them.
        if (parts.length === 1) return void whenSent(parts[0]!, done);
        const unsent = new Set<object>(parts);
        for (const part of parts) whenSent(part, () => unsent.delete(part) && unsent.size === 0 && done());
        return;
      }
      setResult(
        mapAsyncIterator(result, (part) => whenSent(part, (sent) => tally(entry, errorsOf(sent as ResultPart)))),
      );
    },
    onResponse({ request, response, serverContext }) {
      response.headers.set('x-request-id', requestIdOf(request));
      if (!log) return;
      // None when a plugin before this one answered in its onRequest (a form POST's 415): at once, so now.
      const entry = started.get(request) ?? {
        at: performance.now(),
        method: sentMethod(serverContext, request.method),
        path: clip(new URL(request.url).pathname),
        operations: [],
      };
      // node:http refused it itself (408, its body too slow): that answer is its status.
      const refused = refusedByServer(serverContext);
      if (refused !== undefined) {
        [entry.errors, entry.errorCode] = [1, refusalCode(refused)];
        return completed(request, entry, refused);
      }
      // No status was sent to a client that left first.
      if (request.signal.aborted) return gone(request);
      // A whole result is serialized by now, except for a client taking only streams: its line waits for that (it may be
      // sent UPSTREAM_TOO_LARGE instead), or for its client leaving first.
      const { parts } = entry;
      if (parts && !entry.serialized && response.ok && response.body !== null && serializedLater(response)) {
        [entry.status, entry.late] = [response.status, true];
        const res = (serverContext as { res?: ServerResponse } | undefined)?.res;
        res?.once('close', () => {
          if (!entry.late) return;
          delete entry.late;
          gone(request);
        });
        return;
      }
      const withErrors = parts?.some((part) => errorsOf(part).length > 0) ?? false;
      const code = refusedCode(response, withErrors);
      if (code !== undefined) [entry.errors, entry.errorCode] = [1, code];
      else if (withErrors) for (const part of parts!) tally(entry, errorsOf(part));
      // A stream still going (not one refused with a 406, which sends no part) is logged at its end.
      if (entry.streamed && !entry.ended && response.body !== null && response.ok) {
        entry.status = response.status;
        return;
      }
      completed(request, entry, response.status);
    },
  };
}
