import { GraphQLError, Kind, type ASTNode, type SelectionSetNode, type ValidationRule } from 'graphql';

export interface CostOptions {
  /** Largest cost an operation may have. */
  maxCost: number;
}

/** Cost of a root Query field, each of which is one upstream call, and of any other field. */
const upstreamFieldCost = 100;
const fieldCost = 1;

/**
 * A cost budget in which fields that call the PIM (the root Query fields) cost far more than
 * in-memory ones. GraphQL Armor's cost limit weighs fields only by shape, and here every
 * upstream field is a JSON leaf, so it could not tell them from `__typename`. Fragments are
 * costed once per name and spread (so fan-out adds up but stays linear work); a cycle counts
 * nothing here and is reported by graphql-js' own NoFragmentCycles rule.
 */
export function createCostRule({ maxCost }: CostOptions) {
  const rule: ValidationRule = (context) => ({
    OperationDefinition(operation) {
      const memo = new Map<string, number>();
      const visiting = new Set<string>();
      const cost = (set: SelectionSetNode, root: boolean): number => {
        let sum = 0;
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD) {
            const upstream = root && !selection.name.value.startsWith('__');
            sum += upstream ? upstreamFieldCost : fieldCost;
            if (selection.selectionSet) sum += cost(selection.selectionSet, false);
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            sum += cost(selection.selectionSet, root);
          } else {
            const key = `${selection.name.value}:${root}`;
            const fragment = context.getFragment(selection.name.value);
            if (!fragment || visiting.has(key)) continue;
            if (!memo.has(key)) {
              visiting.add(key);
              memo.set(key, cost(fragment.selectionSet, root));
              visiting.delete(key);
            }
            sum += memo.get(key)!;
          }
        }
        return sum;
      };
      // Only queries exist; anything else is refused by graphql-js before it costs anything.
      const total = cost(operation.selectionSet, operation.operation === 'query');
      if (total > maxCost) {
        context.reportError(
          refusal(`Query cost ${total} exceeds the limit of ${maxCost}`, 'GRAPHQL_VALIDATION_FAILED', operation),
        );
      }
    },
  });
  return rule;
}

const refusals = new WeakSet<GraphQLError>();

/**
 * A refused operation: HTTP 400 whatever the Accept header (`spec: false` keeps Yoga from
 * turning it into a 200 for `application/json` clients), with a stable code.
 */
export function refusal(message: string, code: string, node?: ASTNode): GraphQLError {
  const error = new GraphQLError(message, {
    nodes: node ? [node] : undefined,
    extensions: { code, http: { spec: false, status: 400 } },
  });
  refusals.add(error);
  return error;
}

/** Yoga marks every parse failure as a spec error again; this undoes that for our refusals. */
export function keepRefusalStatus(result: unknown): void {
  const errors = (result as { errors?: unknown[] } | null)?.errors ?? [];
  for (const error of errors) {
    if (error instanceof GraphQLError && refusals.has(error)) (error.extensions.http as { spec: boolean }).spec = false;
  }
}
