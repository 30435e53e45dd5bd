import { GraphQLDeferDirective, GraphQLStreamDirective } from '@graphql-tools/utils';
import { GraphQLDirective, GraphQLSchema } from 'graphql';
import { builder } from './builder.ts';
import { FEDERATION_LINK } from './federation.ts';
import { guardEntities } from './representations.ts';
import './products.ts';
import './classifications.ts';

const subgraph = guardEntities(builder.toSubGraphSchema({ linkUrl: FEDERATION_LINK }));

/** A directive with its arguments sorted by name, as Pothos sorts the rest of the schema. */
const sorted = (directive: GraphQLDirective) => {
  const config = directive.toConfig();
  const args = Object.entries(config.args).sort(([a], [b]) => a.localeCompare(b));
  return new GraphQLDirective({ ...config, args: Object.fromEntries(args) });
};

/**
 * The executable schema: the three root fields, the entities Catalog, Classification and
 * ClassificationGroup, and `_service { sdl }` with `_entities`, which make the server a federation
 * v2 subgraph. Pothos sorts it, so its printed form is stable. It declares `@defer` and `@stream`,
 * the directives Yoga's defer-stream plugin would add when serving it, so `schema.graphql` is the
 * schema introspection shows and the examples' `@defer` validates against it (the subgraph SDL,
 * `_service { sdl }`, is unchanged: gateways know these directives themselves).
 */
export const schema = new GraphQLSchema({
  ...subgraph.toConfig(),
  directives: [...subgraph.getDirectives(), sorted(GraphQLDeferDirective), sorted(GraphQLStreamDirective)],
});
