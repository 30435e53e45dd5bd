// Writes supergraph.graphql for the compose fleet's gateway: the façade's subgraph SDL composed with
// Apollo's composition library. Run after a schema change: npm run supergraph
import { writeFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { readSubgraphSdl } from '../../src/schema/federation.ts';
import { schema } from '../../src/schema/index.ts';

/** Where the gateway reaches the façade replicas inside the compose network. */
export const subgraphUrl = 'http://facade:4000/graphql';

/** The supergraph SDL of the façade as the only subgraph, named `pim`. */
export async function composeSupergraph(): Promise<string> {
  const typeDefs = parse(await readSubgraphSdl(schema));
  const result = composeServices([{ name: 'pim', typeDefs, url: subgraphUrl }]);
  if (result.errors) throw new Error(`Composition failed: ${result.errors.map((e) => e.message).join('; ')}`);
  return result.supergraphSdl;
}

if (import.meta.main) writeFileSync(new URL('supergraph.graphql', import.meta.url), await composeSupergraph());
