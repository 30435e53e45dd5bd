import {
  GraphQLError,
  Kind,
  getNamedType,
  isInterfaceType,
  isObjectType,
  type ASTNode,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';

export interface CostOptions {
  /** Largest cost an operation may have. */
  maxCost: number;
}

/** Cost of a field that calls the PIM, and of any other field. */
const upstreamFieldCost = 100;
const fieldCost = 1;

// Every field that calls the PIM returns its JSON body unchanged, and nothing else returns JSON:
// the root fields and the entity fields alike (`_entities` itself, and a reference, call nothing).
const callsUpstream = (type: GraphQLNamedType | undefined) => type?.name === 'JSON';

/**
 * A cost budget in which fields that call the PIM cost far more than in-memory ones. GraphQL
 * Armor's cost limit weighs fields only by shape, and here every upstream field is a JSON leaf,
 * so it could not tell them from `__typename`. Fragments are costed once per name and spread (so
 * fan-out adds up but stays linear work); a cycle counts nothing here and is reported by
 * graphql-js' own NoFragmentCycles rule. An entity field counts once per selection, whatever the
 * number of representations: FEDERATION_MAX_REPRESENTATIONS and the per-request call cap bound those.
 */
export function createCostRule({ maxCost }: CostOptions) {
  const rule: ValidationRule = (context) => ({
    OperationDefinition(operation) {
      const schema = context.getSchema();
      const memo = new Map<string, number>();
      const visiting = new Set<string>();
      const cost = (set: SelectionSetNode, parent: GraphQLNamedType | undefined): number => {
        let sum = 0;
        for (const selection of set.selections) {
          if (selection.kind === Kind.FIELD) {
            const type = fieldType(parent, selection.name.value);
            sum += callsUpstream(type) ? upstreamFieldCost : fieldCost;
            if (selection.selectionSet) sum += cost(selection.selectionSet, type);
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            const condition = selection.typeCondition && schema.getType(selection.typeCondition.name.value);
            sum += cost(selection.selectionSet, condition ?? parent);
          } else {
            const name = selection.name.value;
            const fragment = context.getFragment(name);
            if (!fragment || visiting.has(name)) continue;
            if (!memo.has(name)) {
              visiting.add(name);
              memo.set(
                name,
                cost(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? undefined),
              );
              visiting.delete(name);
            }
            sum += memo.get(name)!;
          }
        }
        return sum;
      };
      // Only queries exist; anything else is refused by graphql-js before it costs anything.
      const root = operation.operation === 'query' ? schema.getQueryType() : undefined;
      const total = cost(operation.selectionSet, root ?? undefined);
      if (total > maxCost) {
        context.reportError(
          refusal(`Query cost ${total} exceeds the limit of ${maxCost}`, 'GRAPHQL_VALIDATION_FAILED', operation),
        );
      }
    },
  });
  return rule;
}

/** The named type a field of `parent` returns; undefined for `__typename` and for unknown fields. */
function fieldType(parent: GraphQLNamedType | undefined, name: string): GraphQLNamedType | undefined {
  const field = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
  return field && getNamedType(field.type);
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
