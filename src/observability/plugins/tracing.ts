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
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import {
  clip,
  createOperationLabel,
  describeOperation,
  errorsOf,
  untilStreamEnds,
  type ResultPart,
} from '../../plugins/operation.ts';

/**
 * One server span per executed operation, named `query OperationName` (`query` without a name), continuing the caller's
 * trace if it sent one. Execution runs inside the span's context, so the upstream calls it
 * causes become its children.
 */
export function useTracing({
  tracer,
  operationNames,
}: {
  tracer: Tracer;
  /** As for metrics: the names spans may carry in their name; absent, the first ones seen. */
  operationNames?: ReadonlySet<string> | undefined;
}): Plugin {
  // Backends group by span name: a client's invented names would make one group each.
  const label = createOperationLabel(operationNames);
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const { type, name, named } = describeOperation(args.document, args.operationName);
      // A caller's `traceparent` (a gateway, a traced client) makes this span part of its trace.
      const { request } = args.contextValue as { request: Request };
      const parent = propagation.extract(context.active(), request.headers, headerGetter);
      // OpenTelemetry's GraphQL conventions: an operation without a name is named by its type alone.
      const attributes = { 'graphql.operation.type': type, ...(named && { 'graphql.operation.name': clip(name) }) };
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
          if (!isAsyncIterable(result)) return void finish(span, result);
          const end = untilStreamEnds(request, () => span.end());
          return { onNext: ({ result: part }) => record(span, part), onEnd: end };
        },
      };
    },
  };
}

// Reads `traceparent` and `tracestate` straight from the Headers, without copying them all per request.
const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

function record(span: Span, result: ResultPart) {
  const errors = errorsOf(result);
  if (errors.length === 0) return;
  span.setAttribute('graphql.error.count', errors.length);
  // The code, not the message: messages name the ids asked for, which spans never carry.
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(errors[0]!.extensions?.['code'] ?? 'UNKNOWN') });
}

function finish(span: Span, result: ResultPart) {
  record(span, result);
  span.end();
}
