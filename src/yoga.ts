import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createYoga, type Plugin, type YogaInitialContext, type YogaServerInstance } from 'graphql-yoga';
import {
  Kind,
  OverlappingFieldsCanBeMergedRule,
  print,
  validate,
  visit,
  type ArgumentNode,
  type FieldNode,
  type ValidationRule,
} from 'graphql';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { PimContext } from './context.ts';
import { maskError, useIncrementalErrorMask, type MaskError } from './errors.ts';
import { documentCaches, useValidationCache } from './plugins/document-cache.ts';
import { createGraphiQLAssets, GRAPHIQL_ASSETS_PATH, graphiqlOptions } from './plugins/graphiql.ts';
import { useHttpCaching } from './plugins/http-caching.ts';
import { useAbuseLimits, useExactIdVariables, useNoStreamsInBatch } from './plugins/limits.ts';
import { MAX_BATCH_OPERATIONS, useRefusalMessages } from './plugins/refusal-messages.ts';
import { corsFor, useCorsVary, useSecurity } from './plugins/security.ts';
import { schema } from './schema/index.ts';
import { withoutSchemaNames } from './schema/representations.ts';

type YogaConfig = Pick<Config, 'security' | 'corsOrigins' | 'limits' | 'httpCaching' | 'batching'>;

/** The plugins built elsewhere, in the order they run among the configured ones. */
export interface YogaParts {
  /** Trusted documents and APQ: before the limits, which check the document they resolve. */
  persisted: Plugin;
  /** The per-request context, and the plugin that ends each request's byte account. */
  requestContext: { context: (initial: YogaInitialContext) => PimContext; plugin: Plugin };
  /** Request log, metrics, spans. */
  observability: Plugin[];
  /** The cache of serialized results, when on. */
  responses: Plugin | undefined;
}

/** The paths the Yoga server answers: its endpoint, and GraphiQL's files where GraphiQL is served (introspection). */
export const yogaPaths = (config: Pick<YogaConfig, 'security'>) => ({
  graphql: '/graphql',
  assets: config.security.introspection ? GRAPHIQL_ASSETS_PATH : undefined,
});

/** The Yoga server of the schema with every plugin in order; serve it with http/server.ts. */
export function createYogaServer(
  config: YogaConfig,
  parts: YogaParts,
  logger?: Logger,
): YogaServerInstance<object, PimContext> {
  // GraphiQL's files are looked up only where GraphiQL is served: production start-up never touches them.
  const paths = yogaPaths(config);
  const graphiql = paths.assets ? createGraphiQLAssets() : undefined;
  const caches = documentCaches();
  // Where suggestions are hidden the schema is (production): no error names what introspection would show.
  const mask: MaskError = config.limits.blockSuggestions
    ? (error, message, isDev) => withoutSchemaNames(maskError(error, message, isDev))
    : maskError;
  return createYoga<object, PimContext>({
    schema,
    context: parts.requestContext.context,
    plugins: [
      useSecurity(config.security),
      useCorsVary(config.corsOrigins),
      parts.persisted,
      useAbuseLimits(config.limits),
      useDeferStreamRules(),
      // The errors of a streamed answer's later parts, masked as Yoga masks the rest (before anything reads them).
      useIncrementalErrorMask(mask, logger),
      parts.requestContext.plugin,
      useHttpCaching(config.httpCaching),
      ...parts.observability,
      // After the observability's onExecute hooks: a refused operation is still logged, counted and traced.
      ...(config.batching ? [useNoStreamsInBatch()] : []),
      // Before the cache of results too: an inexact ID's key would be another id's.
      useExactIdVariables(),
      // Before the cache of results: its refusal of a stream the client cannot take (406) holds for a hit too.
      useRefusalMessages(),
      // After HTTP caching and every other onExecute hook: a hit stops execution where it is.
      ...(parts.responses ? [parts.responses] : []),
      ...(graphiql ? [graphiql.plugin] : []),
      // `Connection` is node:http's to set (hop by hop): Yoga's streamed answers said keep-alive over a shutdown's close.
      // No answer is sniffed as another type than it says: an error message may quote what the caller sent.
      {
        onResponse: ({ response }) => {
          if (response.headers.has('connection')) response.headers.delete('connection');
          response.headers.set('x-content-type-options', 'nosniff');
        },
      },
      // Last: the rules every plugin before it adds are in its key (Yoga's own validation cache is off).
      useValidationCache(caches.documentCache),
    ],
    parserAndValidationCache: caches,
    maskedErrors: { maskError: mask },
    batching: config.batching ? { limit: MAX_BATCH_OPERATIONS } : false,
    cors: corsFor(config.corsOrigins),
    ...(graphiql ? { graphiql: graphiqlOptions, renderGraphiQL: graphiql.render } : { graphiql: false }),
    graphqlEndpoint: paths.graphql,
    landingPage: false,
    // The node:http server (http/server.ts) refuses bodies over HTTP_MAX_BODY_BYTES before Yoga
    // sees them; Yoga's own 25 MB check would pipe every body through one more stream.
    maxRequestBodySize: false,
    logging: logger ?? false,
  });
}

/**
 * Yoga's @defer/@stream plugin with its validation rules added as it adds them, without its per-request filter of the
 * rule list: the filter reassigns the list of its own hook's payload, which envelop never reads back (the rules that
 * validate are those added), so it walked every rule's name on every request and changed nothing. graphql-js's
 * OverlappingFieldsCanBeMergedRule thus stays; the plugin's copy of it, which adds only the @stream check, is replaced
 * by `streamConflictRule`: the copy compared every pair of same-named fields with no budget (700 `__typename`, 8 KB
 * within every limit, held the event loop 100 ms).
 */
function useDeferStreamRules(): Plugin {
  const plugin = useDeferStream() as Plugin;
  const rules: ValidationRule[] = [];
  const record = {
    params: { rules: [] },
    addValidationRule: (rule: ValidationRule) =>
      void rules.push(rule.name === 'OverlappingFieldsCanBeMergedRule' ? streamConflictRule : rule),
  };
  plugin.onValidate?.(record as unknown as Parameters<NonNullable<Plugin['onValidate']>>[0]);
  return {
    ...plugin,
    onValidate({ addValidationRule }) {
      for (const rule of rules) addValidationRule(rule);
    },
  };
}

// The argument a field's @stream becomes for the comparison below: no schema argument starts with `__`.
const STREAM_ARGUMENT = '__stream';

/**
 * The @stream check of the plugin's overlap rule, through graphql-js's own (with its work budget): in a copy of a
 * document that streams, each field's @stream arguments become an argument of the field, so two fields of one response
 * name whose @stream differ have differing arguments there. The conflicts found only in that copy are the streams'.
 */
const streamConflictRule: ValidationRule = (context) => ({
  Document: {
    leave(document) {
      let streams = false;
      const marked = visit(document, {
        Field(field: FieldNode) {
          const stream = field.directives?.find((directive) => directive.name.value === 'stream');
          if (!stream) return undefined;
          streams = true;
          const sorted = [...(stream.arguments ?? [])].sort((a, b) => a.name.value.localeCompare(b.name.value));
          const argument: ArgumentNode = {
            kind: Kind.ARGUMENT,
            name: { kind: Kind.NAME, value: STREAM_ARGUMENT },
            value: { kind: Kind.STRING, value: sorted.map((a) => print(a)).join(',') },
          };
          return { ...field, arguments: [...(field.arguments ?? []), argument] };
        },
      });
      if (!streams) return;
      const schema = context.getSchema();
      const rules = [OverlappingFieldsCanBeMergedRule];
      const own = new Set(validate(schema, document, rules).map((error) => error.message));
      for (const error of validate(schema, marked, rules)) {
        // graphql-js giving up on the copy is reported as it is for the document (limits.ts refuses it as too big).
        if (error.message === 'Validation aborted.') return void context.reportError(error);
        if (own.has(error.message) || !error.message.includes('they have differing arguments')) continue;
        error.message = error.message.replace('they have differing arguments', 'they have differing stream directives');
        context.reportError(error);
      }
    },
  },
});
