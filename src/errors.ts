import { GraphQLError, type FieldNode } from 'graphql';
import { isAsyncIterable, maskError as yogaMaskError, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import { InvalidArgumentError, PimError } from './pim/rest/errors.ts';
import type { OperationName, PimArgs } from './pim/rest/endpoints.ts';
import { pathOf, type FieldAt, type KeyNames, type PimApi } from './pim/loaders.ts';

/**
 * The error contract in one place: every PimError leaves the PIM API as a GraphQLError with its
 * stable `extensions.code` (and `extensions.upstream.status` when the PIM answered). Converting
 * here, before Yoga masks errors, keeps these expected outcomes out of the error log.
 * `extensions.http` is never set, so an upstream 404 stays a field error in an HTTP 200 response.
 */
export function withErrorContract(api: PimApi): PimApi {
  const wrap =
    (call: PimApi[OperationName]): PimApi[OperationName] =>
    (args, at, keyNames) =>
      call(args, at).catch((error: unknown) => Promise.reject(toContractError(error, args, at, keyNames)));
  return {
    ...api,
    searchProducts: wrap(api.searchProducts),
    getClassificationGroup: wrap(api.getClassificationGroup),
    listClassificationGroups: wrap(api.listClassificationGroups),
  };
}

// Located here, where the field is known: the executor then takes the error as it is. Left unlocated, it is wrapped
// in a second GraphQLError that reads this one's stack; a request of many refused fields (entities past the calls
// cap, each a field error) spent most of its time building and formatting errors.
// An argument the field filled from its entity's key under another name is named as the key field the client wrote.
function toContractError(error: unknown, args: PimArgs, at: FieldAt | undefined, keyNames?: KeyNames): unknown {
  if (!(error instanceof PimError)) return error;
  const { status, reason } = error;
  const upstream = status === undefined ? {} : { upstream: { status, ...(reason && { reason }) } };
  const renamed = error instanceof InvalidArgumentError ? keyNames?.[error.argument] : undefined;
  const message =
    error.code === 'NOT_FOUND'
      ? `${error.message}: ${idsOf(args, keyNames)}`
      : renamed !== undefined
        ? `Invalid argument "${renamed}": ${(error as InvalidArgumentError).rule}`
        : error.message;
  const extensions = { code: error.code, ...upstream };
  return withoutStack(
    () =>
      new GraphQLError(
        message,
        at ? { nodes: at.fieldNodes as readonly FieldNode[], path: pathOf(at.path), extensions } : { extensions },
      ),
  );
}

// An outcome the client is told of has no use for a stack (nothing logs one), and capturing it is most of an error's cost.
function withoutStack<T>(build: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return build();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** The ids a call asked for, as `catalogId "X", classificationGroupId "Y"`: what a 404 did not find. */
function idsOf(args: PimArgs, keyNames?: KeyNames): string {
  const ids = Object.entries(args)
    .filter(([name, value]) => name.endsWith('Id') && name !== 'languageId' && value)
    .map(([name, value]) => [keyNames?.[name] ?? name, value] as const);
  // In name order: a root field and an entity field asking the same thing get the same message (an entity field
  // naming the key fields the client wrote).
  ids.sort(([a], [b]) => (a < b ? -1 : 1));
  return ids.map(([name, value]) => `${name} ${JSON.stringify(value)}`).join(', ');
}

/**
 * Anything outside the contract reaches clients as Yoga's generic "Unexpected error.", never
 * with a stack (whatever NODE_ENV says); Yoga logs the original on the server. A field ended
 * because its client went away is left as it is: Yoga logs only what it masks, and the request
 * log already says once that the client left (nobody reads this answer). graphql-js's refusals of
 * variables, which carry no code, get BAD_USER_INPUT. Yoga's refusal of a POST body that is not JSON
 * loses the parser's error it carries in `extensions.originalError` (an internal, quoting the body back),
 * and keeps its 400: Yoga reads that extension as "not a GraphQL error", else answers `application/json` 200.
 * Called for errors only: no cost to a request without.
 */
export const maskError: MaskError = (error, message) =>
  isClientGone(error)
    ? error
    : isInputRefusal(error)
      ? badUserInput(error)
      : isOperationRefusal(error)
        ? withExtensions(error, asRequestError(error.extensions))
        : hasParserDetail(error)
          ? withExtensions(error, { code: 'BAD_REQUEST', http: { spec: false, status: 400 } })
          : yogaMaskError(error, message, false);

/**
 * The client's input refused in words that carry no code: graphql-js's for a variable it cannot coerce
 * or that is missing (before execution), an argument's value the executor reads (a nullable variable sent as null
 * where the argument is non-null with a default, `@defer(if: $b)`), and graphql-tools' executor's plain Error for
 * a negative or null `@stream(initialCount:)`, which would otherwise be masked as unexpected and logged with its stack.
 */
const isInputRefusal = (error: unknown): error is GraphQLError =>
  error instanceof GraphQLError &&
  error.extensions['code'] === undefined &&
  ((error.path === undefined && error.message.startsWith('Variable "$')) ||
    ARGUMENT_REFUSAL.test(error.message) ||
    INITIAL_COUNT_REFUSAL.test(error.originalError?.message ?? ''));

// @graphql-tools/utils getArgumentValues' words (graphql-js's own): required, non-null, or not of its type.
const ARGUMENT_REFUSAL =
  /^Argument "\w+" (of (required|non-null) type "[^"]+" (was not provided|must not be null)|has invalid value)/;
const INITIAL_COUNT_REFUSAL = /^initialCount must be a (positive integer|number)$/;

const badUserInput = (error: GraphQLError) =>
  withExtensions(error, asRequestError({ ...error.extensions, code: 'BAD_USER_INPUT' }));

const isOperationRefusal = (error: unknown): error is GraphQLError =>
  error instanceof GraphQLError && error.extensions['code'] === 'OPERATION_RESOLUTION_FAILURE';

/**
 * GraphQL over HTTP: a request error found before execution (graphql-tools' executor marks it 400: the operation
 * not determined, a variable not coerced) is 400 under application/graphql-response+json and 200 under
 * application/json, where a client must not trust the body of any other status; `spec` tells Yoga so, as graphql-js's
 * validation errors do.
 */
function asRequestError(extensions: GraphQLError['extensions']): GraphQLError['extensions'] {
  const http = extensions['http'] as { status?: number } | undefined;
  return http?.status === 400 ? { ...extensions, http: { ...http, spec: true } } : extensions;
}

const hasParserDetail = (error: unknown): error is GraphQLError =>
  error instanceof GraphQLError && error.extensions['code'] === 'BAD_REQUEST' && 'originalError' in error.extensions;

/**
 * The same error with other extensions, changed in place: Yoga logs every error a mask replaces as unexpected, at
 * error level and with the client's input in it (a refused 64 KB variable made a 320 KB line).
 */
function withExtensions(error: GraphQLError, extensions: GraphQLError['extensions']): GraphQLError {
  const own = error.extensions as Record<string, unknown>;
  if (Object.isFrozen(own)) return new GraphQLError(error.message, { ...error, extensions });
  for (const name of Object.keys(own)) delete own[name];
  Object.assign(own, extensions);
  return error;
}

/** What Yoga calls for each error of a result it sends: maskError above, or one built on it. */
export type MaskError = NonNullable<
  NonNullable<Exclude<YogaServerOptions<object, object>['maskedErrors'], boolean>>['maskError']
>;

/**
 * The mask for the later parts of a streamed (`@defer`/`@stream`) answer. Yoga masks the `errors` of each part, not
 * those of its `incremental` payloads (a field of a deferred fragment, an item of a streamed list, an entity's field
 * under either): they went out as thrown, a refusal of input without its code (graphql_errors_total counted it as
 * UNKNOWN), an unexpected error in its own words and unlogged. Each goes through `mask` as Yoga sends a part's own
 * errors, and one masked is logged as Yoga logs it.
 */
export function useIncrementalErrorMask(mask: MaskError, logger?: Pick<Logger, 'error'>): Plugin {
  const masked = (error: Error) => {
    const sent = mask(error, 'Unexpected error.', false);
    if (sent !== error) logger?.error(error);
    return sent;
  };
  type Payload = { errors?: readonly Error[] };
  // The same hooks for every operation: nothing is allocated for a request that streams nothing.
  const streamed = {
    onNext: ({ result, setResult }: { result: unknown; setResult: (result: never) => void }) => {
      const { incremental } = result as { incremental?: readonly Payload[] };
      if (!incremental?.some((payload) => payload.errors?.length)) return;
      const payloads = incremental.map((payload) =>
        payload.errors?.length ? { ...payload, errors: payload.errors.map(masked) } : payload,
      );
      setResult({ ...(result as object), incremental: payloads } as never);
    },
  };
  const hooks = {
    onExecuteDone: ({ result }: { result: unknown }) => (isAsyncIterable(result) ? streamed : undefined),
  };
  return { onExecute: () => hooks };
}

// The request's signal aborts with an AbortError when its client disconnects; a TimeoutError is not that.
export function isClientGone(error: unknown): error is Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  return original instanceof DOMException && original.name === 'AbortError';
}

// Refusals sent before GraphQL runs, or instead of it, by status: each has a stable code, as a GraphQL error has.
const refusalCodes: Record<number, string> = {
  400: 'BAD_REQUEST',
  404: 'PATH_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  411: 'LENGTH_REQUIRED',
  413: 'REQUEST_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  417: 'EXPECTATION_FAILED',
  421: 'MISDIRECTED_REQUEST',
  431: 'REQUEST_HEAD_TOO_LARGE',
  500: 'INTERNAL_SERVER_ERROR',
  503: 'OVERLOADED',
};

/** The stable code of a refusal by its status. */
export const refusalCode = (status: number): string => refusalCodes[status] ?? 'BAD_REQUEST';

/** The message of a 404: the one path that serves GraphQL (Yoga's endpoint). */
export const notServedMessage = (graphqlPath: string): string => `Nothing is served here; GraphQL is at ${graphqlPath}`;

/**
 * The headers of a refusal the servers send themselves: JSON, never kept, never sniffed as anything else (a message
 * may quote what the caller sent).
 */
export const refusalHeaders = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

/** The JSON body of an HTTP refusal: one error saying what to send instead, with the status's stable code. */
export const refusalBody = (status: number, message: string): string =>
  JSON.stringify({ errors: [{ message, extensions: { code: refusalCode(status) } }] });
