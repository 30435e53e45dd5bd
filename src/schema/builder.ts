import SchemaBuilder from '@pothos/core';
import { JSONResolver } from 'graphql-scalars';
import type { Context } from '../context.ts';

/** The Pothos builder: configuration only; fields live in the domain files. */
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: { JSON: { Input: unknown; Output: unknown }; ID: { Input: string; Output: string } };
}>({});

builder.addScalarType('JSON', JSONResolver);
builder.queryType({});
