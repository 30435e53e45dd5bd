import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { createYoga, type Plugin, type YogaInitialContext, type YogaServerInstance } from 'graphql-yoga';
import type { ValidationRule } from 'graphql';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { PimContext } from './context.ts';
import { maskError, useIncrementalErrorMask, type MaskError } from './errors.ts';
import { documentCaches, useValidationCache } from './plugins/document-cache.ts';
import { createGraphiQLAssets, graphiqlOptions } from './plugins/graphiql.ts';
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

/** The Yoga server of the schema with every plugin in order; serve it with http/server.ts. */
export function createYogaServer(
  config: YogaConfig,
  parts: YogaParts,
  logger?: Logger,
): YogaServerInstance<object, PimContext> {
  // GraphiQL's files are looked up only where GraphiQL is served: production start-up never touches them.
  const graphiql = config.security.introspection ? createGraphiQLAssets() : undefined;
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
      {
        onResponse: ({ response }) =>
          void (response.headers.has('connection') && response.headers.delete('connection')),
      },
      // Last: the rules every plugin before it adds are in its key (Yoga's own validation cache is off).
      useValidationCache(),
    ],
    parserAndValidationCache: documentCaches(),
    maskedErrors: { maskError: mask },
    batching: config.batching ? { limit: MAX_BATCH_OPERATIONS } : false,
    cors: corsFor(config.corsOrigins),
    ...(graphiql ? { graphiql: graphiqlOptions, renderGraphiQL: graphiql.render } : { graphiql: false }),
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
 * OverlappingFieldsCanBeMergedRule thus runs beside the plugin's copy: their common errors are dropped in limits.ts.
 */
function useDeferStreamRules(): Plugin {
  const plugin = useDeferStream() as Plugin;
  const rules: ValidationRule[] = [];
  const record = { params: { rules: [] }, addValidationRule: (rule: ValidationRule) => void rules.push(rule) };
  plugin.onValidate?.(record as unknown as Parameters<NonNullable<Plugin['onValidate']>>[0]);
  return {
    ...plugin,
    onValidate({ addValidationRule }) {
      for (const rule of rules) addValidationRule(rule);
    },
  };
}
