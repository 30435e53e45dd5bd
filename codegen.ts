import type { CodegenConfig } from '@graphql-codegen/cli';
import { printSchema } from 'graphql';
import { schema } from './src/schema/index.ts';

// The schema comes from the code itself, so schema.graphql can never drift from it unnoticed.
const sdl = printSchema(schema);

const config: CodegenConfig = {
  schema: sdl,
  documents: ['examples/*.graphql'],
  generates: {
    'schema.graphql': { plugins: ['schema-ast'], config: { includeDirectives: true } },
    'examples/gql/': {
      preset: 'client',
      // persisted-documents.json (sha256 -> document) is the manifest PERSISTED_DOCUMENTS_PATH loads.
      presetConfig: { fragmentMasking: false, persistedDocuments: true },
      config: { scalars: { JSON: 'unknown', ID: 'string' }, useTypeImports: true, emitLegacyCommonJSImports: false },
    },
  },
};

export default config;
