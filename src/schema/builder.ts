import SchemaBuilder from '@pothos/core';
import DirectivePlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import { JSONResolver } from 'graphql-scalars';
import type { Context } from '../context.ts';

/** The Pothos builder: configuration only; fields live in the domain files. */
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: { JSON: { Input: unknown; Output: unknown }; ID: { Input: string; Output: string } };
}>({
  // Federation makes the schema an Apollo Federation v2 subgraph; it builds on the directives plugin.
  plugins: [DirectivePlugin, FederationPlugin],
});

builder.addScalarType('JSON', JSONResolver);
builder.queryType({});
