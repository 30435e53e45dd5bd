import { getOperationAST, type DocumentNode, type GraphQLFormattedError } from 'graphql';

/** A response or one part of a multipart response; deferred parts nest under `incremental`. */
export type ResultPart = { errors?: readonly GraphQLFormattedError[]; incremental?: readonly ResultPart[] };

const none: GraphQLFormattedError[] = [];

/** Every error a response (part) carries, deferred parts included. */
export function errorsOf(part: ResultPart): readonly GraphQLFormattedError[] {
  // Most responses have no errors: nothing to allocate for them.
  if (part.incremental === undefined) return part.errors ?? none;
  return [...(part.errors ?? []), ...part.incremental.flatMap(errorsOf)];
}

export interface OperationLabel {
  type: string;
  name: string;
}

// Yoga's parser cache hands out one document per query text, so repeated operations hit here.
const described = new WeakMap<DocumentNode, Map<string | null | undefined, OperationLabel>>();

/** Type and name of the operation being executed, as metric labels and span attributes. */
export function describeOperation(document: DocumentNode, operationName?: string | null): OperationLabel {
  let byName = described.get(document);
  if (!byName) described.set(document, (byName = new Map()));
  let label = byName.get(operationName);
  if (!label) {
    const operation = getOperationAST(document, operationName);
    label = { type: operation?.operation ?? 'unknown', name: operation?.name?.value ?? 'anonymous' };
    // Only names the document defines are kept, so a client's invented names cannot grow the map.
    if (operation) byName.set(operationName, label);
  }
  return label;
}
