import { execute, parse, type GraphQLSchema } from 'graphql';

/** The federation spec version the subgraph SDL links to; composition reads it from `@link`. */
export const FEDERATION_LINK = 'https://specs.apollo.dev/federation/v2.6';

/**
 * The SDL a gateway or schema registry expects from this subgraph: the answer to
 * `{ _service { sdl } }`, with the `@link` to the federation spec.
 */
export async function readSubgraphSdl(schema: GraphQLSchema): Promise<string> {
  const result = await execute({ schema, document: parse('{ _service { sdl } }') });
  const sdl = (result.data?._service as { sdl?: unknown } | undefined)?.sdl;
  if (typeof sdl !== 'string') throw new Error(`Expected _service.sdl to be a string, got ${JSON.stringify(result)}`);
  return sdl;
}
