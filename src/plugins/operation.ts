import { getOperationAST, type DocumentNode } from 'graphql';

/** Type and name of the operation being executed, as metric labels and span attributes. */
export function describeOperation(document: DocumentNode, operationName?: string | null) {
  const operation = getOperationAST(document, operationName);
  return { type: operation?.operation ?? 'unknown', name: operation?.name?.value ?? 'anonymous' };
}
