import { Kind, visit, type ASTNode, type ValidationContext, type ValidationRule } from 'graphql';
import { refusal } from './cost.ts';

/**
 * Selection sets nested in one operation, those of inline fragments and spread fragments counted: far past any
 * real document (GRAPHQL_MAX_DEPTH counts fields only, 10 by default), far below the thousands at which the
 * executor's recursion (collectFields) runs out of stack. Inline fragments add no depth for GRAPHQL_MAX_DEPTH, so
 * with GRAPHQL_MAX_TOKENS raised a document could nest them that deep and fail as a 500.
 */
export const MAX_NESTING = 200;

/** Refuses a document whose operations nest selection sets deeper than MAX_NESTING, walking it without recursion. */
export const nestingRule: ValidationRule = (context: ValidationContext) => ({
  Document: {
    enter(document) {
      const fragments = new Map<string, Nesting>();
      const operations: Nesting[] = [];
      for (const definition of document.definitions) {
        if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, nestingOf(definition));
        else if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(nestingOf(definition));
      }
      const deepest = createDeepest(fragments);
      if (operations.some((operation) => deepest(operation) > MAX_NESTING)) {
        context.reportError(refusal('The document is nested too deeply', 'GRAPHQL_VALIDATION_FAILED'));
      }
      return false;
    },
  },
});

/** A definition's own deepest nesting, and each fragment it spreads with the depth it spreads it at. */
interface Nesting {
  own: number;
  spreads: Array<[name: string, depth: number]>;
}

// graphql-js's visit() keeps its own stack: no recursion however deep the document.
function nestingOf(definition: ASTNode): Nesting {
  const nesting: Nesting = { own: 0, spreads: [] };
  let depth = 0;
  visit(definition, {
    SelectionSet: {
      enter: () => void (nesting.own = Math.max(nesting.own, ++depth)),
      leave: () => void depth--,
    },
    FragmentSpread: (spread) => void nesting.spreads.push([spread.name.value, depth]),
  });
  return nesting;
}

/**
 * The deepest nesting of a definition through the fragments it spreads, each fragment's worked out once (a chain
 * that spreads each fragment twice would otherwise double at every link), with a list rather than recursion (the
 * chain may be thousands long). A cycle, which validation refuses anyway, counts as no further depth.
 */
function createDeepest(fragments: ReadonlyMap<string, Nesting>) {
  const total = new Map<string, number>();
  const fragmentTotal = (name: string): number => {
    const pending = [name];
    const started = new Set<string>();
    while (pending.length > 0) {
      const current = pending[pending.length - 1]!;
      const nesting = fragments.get(current);
      if (total.has(current) || !nesting) {
        pending.pop();
        continue;
      }
      const unknown = started.has(current)
        ? []
        : nesting.spreads.filter(([spread]) => !total.has(spread) && !started.has(spread) && fragments.has(spread));
      started.add(current);
      if (unknown.length > 0) {
        pending.push(...unknown.map(([spread]) => spread));
        continue;
      }
      pending.pop();
      total.set(
        current,
        through(nesting, (spread) => total.get(spread) ?? 0),
      );
    }
    return total.get(name) ?? 0;
  };
  return (operation: Nesting) => through(operation, fragmentTotal);
}

const through = ({ own, spreads }: Nesting, totalOf: (name: string) => number) =>
  spreads.reduce((deepest, [name, depth]) => Math.max(deepest, depth + totalOf(name)), own);
