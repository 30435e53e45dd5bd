import { getOperationAST, type DocumentNode, type GraphQLFormattedError } from 'graphql';

/** A response or one part of a multipart response; deferred parts nest under `incremental`. */
export type ResultPart = { errors?: readonly GraphQLFormattedError[]; incremental?: readonly ResultPart[] };

/** Every error a response (part) carries, deferred parts included. */
export function errorsOf(part: ResultPart): GraphQLFormattedError[] {
  return [...(part.errors ?? []), ...(part.incremental ?? []).flatMap(errorsOf)];
}

/** Type and name of the operation being executed, as metric labels and span attributes. */
export function describeOperation(document: DocumentNode, operationName?: string | null) {
  const operation = getOperationAST(document, operationName);
  return { type: operation?.operation ?? 'unknown', name: operation?.name?.value ?? 'anonymous' };
}
