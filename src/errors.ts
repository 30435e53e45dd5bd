import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError, type YogaServerOptions } from 'graphql-yoga';
import { PimError } from './pim/errors.ts';

/**
 * The error contract in one place: a PimError becomes a GraphQLError with its stable
 * `extensions.code` (and `extensions.upstream.status` when the PIM answered); anything else
 * is masked by Yoga as an internal error. `extensions.http` is never set, so an upstream 404
 * stays a field error inside an HTTP 200 response.
 */
export const maskError: NonNullable<
  Exclude<YogaServerOptions<object, object>['maskedErrors'], boolean>
>['maskError'] = (error, message) => {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof PimError) return toGraphQLError(original, error);
  // Details of anything else stay in the server log; clients only see the generic message.
  return yogaMaskError(error, message, false);
};

function toGraphQLError(original: PimError, error: unknown): GraphQLError {
  const located = error instanceof GraphQLError ? error : undefined;
  return new GraphQLError(original.message, {
    nodes: located?.nodes,
    path: located?.path,
    extensions: {
      code: original.code,
      ...(original.status === undefined ? {} : { upstream: { status: original.status } }),
    },
  });
}
