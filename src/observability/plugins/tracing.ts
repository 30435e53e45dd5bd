import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import type { GraphQLFormattedError } from 'graphql';
import { isAsyncIterable, mapAsyncIterator, type Plugin } from 'graphql-yoga';
import {
  clip,
  describeOperation,
  errorsOf,
  serializedLater,
  untilStreamEnds,
  whenSent,
  type ResultPart,
} from '../../plugins/operation.ts';
import { isClientGone } from '../../errors.ts';
import { requestIdOf } from './request-log.ts';

/**
 * One server span per executed operation, named `query OperationName` (`query` without a name), continuing the caller's
 * trace if it sent one. Execution runs inside the span's context, so the upstream calls it
 * causes become its children.
 */
export function useTracing({
  tracer,
  label,
}: {
  tracer: Tracer;
  /**
   * The metrics' label of an operation name (createOperationLabel), also a span's name: backends group by span name,
   * and a client's invented names would make one group each.
   */
  label: (name: string) => string;
}): Plugin {
  // A span's status is the errors its client got: serialized, a result or a stream's part may have been refused
  // (plugins/sent-bytes.ts: UPSTREAM_TOO_LARGE alone), so a whole result's span ends with its response, a stream's
  // with the stream, and each records what it was sent as.
  // One a multipart or event-stream body serializes as it is read, after the response, ends once serialized (`late`).
  const wholes = new WeakMap<Request, Whole[]>();
  const streams = new WeakMap<Request, Span>();
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { type, name, named } = describeOperation(args.document, args.operationName);
      // A caller's `traceparent` (a gateway, a traced client) makes this span part of its trace.
      const { request } = args.contextValue as { request: Request };
      const parent = propagation.extract(context.active(), request.headers, headerGetter);
      // OpenTelemetry's GraphQL conventions: an operation without a name is named by its type alone.
      // The request id its log line and response carry, to go from one to the other (semantic conventions' header form).
      const attributes = {
        'graphql.operation.type': type,
        ...(named && { 'graphql.operation.name': clip(name) }),
        'http.request.header.x-request-id': [requestIdOf(request)],
      };
      const span = tracer.startSpan(
        named ? `${type} ${label(name)}` : type,
        { kind: SpanKind.SERVER, attributes },
        parent,
      );
      const active = trace.setSpan(parent, span);
      setExecuteFn(async (execArgs) => {
        try {
          return await context.with(active, () => executeFn(execArgs));
        } catch (error) {
          // onExecuteDone never runs for a thrown execution: end the span here, or it stays open.
          span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
          throw error;
        }
      });
      return {
        onExecuteDone: ({ result }) => {
          if (!isAsyncIterable(result)) {
            provisional(span, result);
            // The hooks after this one replace the result by copies of its own properties: the span goes along.
            const whole: Whole = { span, serialized: false };
            (result as Spanned)[SPAN] = whole;
            const spans = wholes.get(request);
            if (spans) spans.push(whole);
            else wholes.set(request, [whole]);
            return;
          }
          streams.set(request, span);
          const end = untilStreamEnds(request, () => span.end());
          return { onNext: ({ result: part }) => provisional(span, part), onEnd: end };
        },
      };
    },
    // After plugins/sent-bytes.ts's hook (the request context's plugin comes before the observability's).
    onResultProcess({ request, result, setResult }) {
      if (isAsyncIterable(result)) {
        const span = streams.get(request);
        if (span) setResult(mapAsyncIterator(result, (part) => whenSent(part, (sent) => record(span, sent))));
        return;
      }
      for (const one of Array.isArray(result) ? result : [result]) {
        const whole = (one as Spanned)[SPAN];
        if (!whole) continue;
        whenSent(one, (sent) => {
          record(whole.span, sent);
          whole.serialized = true;
          whole.late?.();
        });
      }
    },
    onResponse({ request, response }) {
      const later = serializedLater(response);
      for (const whole of wholes.get(request) ?? []) {
        // Or when its client leaves first: its body is then never read.
        if (later && !whole.serialized) whole.late = untilStreamEnds(request, () => whole.span.end());
        else whole.span.end();
      }
      wholes.delete(request);
    },
  };
}

const SPAN = Symbol('operation span');
/** The span of a whole result, and whether that result was serialized (what its client got is known). */
interface Whole {
  span: Span;
  serialized: boolean;
  /** Ends the span of one serialized after its response. */
  late?: () => void;
}
type Spanned = { [SPAN]?: Whole };

// Reads `traceparent` and `tracestate` straight from the Headers, without copying them all per request.
const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

// How many errors each span's client was sent so far, over all the parts of a stream.
const sentErrors = new WeakMap<Span, number>();

/** `result` (a whole result or a stream's part) as it was sent: its errors add up, the first sent gives the status. */
function record(span: Span, result: ResultPart) {
  const errors = operationErrors(result);
  if (errors.length === 0) return;
  const before = sentErrors.get(span) ?? 0;
  sentErrors.set(span, before + errors.length);
  setErrors(span, before + errors.length, before === 0 ? errors[0] : undefined);
}

/** `result` as executed, before it is serialized (a refusal may take its place): what the span says until then. */
function provisional(span: Span, result: ResultPart) {
  const errors = operationErrors(result);
  if (errors.length > 0 && !sentErrors.has(span)) setErrors(span, errors.length, errors[0]);
}

// A field cut because its client left (graphql-js's error of the request's AbortError, masked as it is) is no error of
// the operation's: nobody got it (it is written out, if at all, after the client went), and the metrics count it as a
// disconnect, not as an error. Left in, every client that went away made its span an ERROR named UNKNOWN.
function operationErrors(result: ResultPart): readonly GraphQLFormattedError[] {
  const errors = errorsOf(result);
  return errors.length > 0 && errors.some(isClientGone) ? errors.filter((error) => !isClientGone(error)) : errors;
}

function setErrors(span: Span, count: number, first: GraphQLFormattedError | undefined) {
  span.setAttribute('graphql.error.count', count);
  // The code, not the message: messages name the ids asked for, which spans never carry.
  if (first) span.setStatus({ code: SpanStatusCode.ERROR, message: String(first.extensions?.['code'] ?? 'UNKNOWN') });
}
