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
  /** Most directives an operation may hold, a fragment's counted at each spread of it. */
  maxDirectives: number;
}

/** Cost of a field that calls the PIM, and of any other field. */
const upstreamFieldCost = 100;
const fieldCost = 1;

// Every field that calls the PIM returns its JSON body unchanged, and nothing else returns JSON:
// the root fields and the entity fields alike (`_entities` itself, and a reference, call nothing).
const callsUpstream = (type: GraphQLNamedType | undefined) => type?.name === 'JSON';

/** What one walk of an operation tallies: its cost and its directives. */
type Tally = { cost: number; directives: number };

/**
 * A cost budget in which fields that call the PIM cost far more than in-memory ones. GraphQL
 * Armor's cost limit weighs fields only by shape, and here every upstream field is a JSON leaf,
 * so it could not tell them from `__typename`. Fragments are costed once per name and spread (so
 * fan-out adds up but stays linear work); a cycle counts nothing here and is reported by
 * graphql-js' own NoFragmentCycles rule. An entity field counts once per selection, whatever the
 * number of representations: FEDERATION_MAX_REPRESENTATIONS and the per-request call cap bound those.
 * The same walk counts the directives (GRAPHQL_MAX_DIRECTIVES), each spread's own with its fragment's: Armor's rule
 * counted a fragment's again at each spread but not the spread's own, and 60 `...F @defer` passed a limit of 50.
 */
export function createCostRule({ maxCost, maxDirectives }: CostOptions) {
  const rule: ValidationRule = (context) => ({
    OperationDefinition(operation) {
      const schema = context.getSchema();
      const memo = new Map<string, Tally>();
      const visiting = new Set<string>();
      const tally = (set: SelectionSetNode, parent: GraphQLNamedType | undefined, sum: Tally): Tally => {
        for (const selection of set.selections) {
          sum.directives += selection.directives?.length ?? 0;
          if (selection.kind === Kind.FIELD) {
            const type = fieldType(parent, selection.name.value);
            sum.cost += callsUpstream(type) ? upstreamFieldCost : fieldCost;
            if (selection.selectionSet) tally(selection.selectionSet, type, sum);
          } else if (selection.kind === Kind.INLINE_FRAGMENT) {
            const condition = selection.typeCondition && schema.getType(selection.typeCondition.name.value);
            tally(selection.selectionSet, condition ?? parent, sum);
          } else {
            const name = selection.name.value;
            const fragment = context.getFragment(name);
            if (!fragment || visiting.has(name)) continue;
            let its = memo.get(name);
            if (!its) {
              visiting.add(name);
              const type = schema.getType(fragment.typeCondition.name.value) ?? undefined;
              its = tally(fragment.selectionSet, type, { cost: 0, directives: fragment.directives?.length ?? 0 });
              memo.set(name, its);
              visiting.delete(name);
            }
            sum.cost += its.cost;
            sum.directives += its.directives;
          }
        }
        return sum;
      };
      // Only queries exist; anything else is refused by graphql-js before it costs anything.
      const root = operation.operation === 'query' ? schema.getQueryType() : undefined;
      const { cost, directives } = tally(operation.selectionSet, root ?? undefined, {
        cost: 0,
        directives: operation.directives?.length ?? 0,
      });
      if (cost > maxCost) {
        context.reportError(
          refusal(`Query cost ${cost} exceeds the limit of ${maxCost}`, 'GRAPHQL_VALIDATION_FAILED', operation),
        );
      }
      if (directives > maxDirectives) {
        const message = `Directives limit of ${maxDirectives} exceeded, found ${directives}.`;
        context.reportError(refusal(message, 'GRAPHQL_VALIDATION_FAILED', operation));
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
