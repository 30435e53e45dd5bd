import { readFileSync } from 'node:fs';
import { buildSchema, printSchema, type GraphQLObjectType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { readSubgraphSdl } from '../src/schema/federation.ts';
import { schema } from '../src/schema/index.ts';

const entityTypes = ['Catalog', 'Classification', 'ClassificationGroup'];
const objectType = (name: string) => schema.getType(name) as GraphQLObjectType;

const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');

describe('schema.graphql', () => {
  it('is the schema the code builds (run `npm run codegen` after changing it)', () => {
    expect(printSchema(buildSchema(committed))).toBe(printSchema(schema));
  });

  it('describes every field and argument', () => {
    const fields = schema.getQueryType()!.getFields();
    const entityFields = entityTypes.flatMap((name) => Object.values(objectType(name).getFields()));
    for (const field of [
      ...['catalogProducts', 'classificationGroup', 'classificationGroups'].map((name) => fields[name]!),
      ...entityFields,
    ]) {
      expect(field.description, field.name).toBeTruthy();
      for (const arg of field.args) expect(arg.description, `${field.name}(${arg.name})`).toBeTruthy();
    }
  });

  it('keeps the contract: three JSON fields with these arguments', () => {
    const fields = schema.getQueryType()!.getFields();
    const signature = (name: string) =>
      `${fields[name]!.args.map((a) => `${a.name}: ${a.type}`)
        .sort()
        .join(', ')} -> ${fields[name]!.type}`;
    expect(signature('catalogProducts')).toBe(
      'catalogId: ID!, classificationGroupClassificationId: ID, classificationGroupId: ID, classificationId: ID, languageId: String, page: Int, pageSize: Int, sorting: String -> JSON',
    );
    expect(signature('classificationGroup')).toBe(
      'classificationGroupId: ID!, classificationId: ID!, languageId: String, levels: Int -> JSON',
    );
    expect(signature('classificationGroups')).toBe(
      'classificationId: ID!, languageId: String, page: Int, pageSize: Int -> JSON',
    );
  });

  it('adds the entities Catalog, Classification and ClassificationGroup with these keys and fields', async () => {
    const sdl = await readSubgraphSdl(schema);
    const keys = [...sdl.matchAll(/^type (\w+)\s+@key\(fields: "([^"]+)"\)/gm)].map(
      ([, type, key]) => `${type}: ${key}`,
    );
    expect(keys).toEqual([
      'Catalog: catalogId',
      'Classification: classificationId',
      'ClassificationGroup: classificationId classificationGroupId',
    ]);
    const signatures = entityTypes.flatMap((type) =>
      Object.values(objectType(type).getFields()).map(
        (field) =>
          `${type}.${field.name}(${field.args
            .map((a) => `${a.name}: ${a.type}`)
            .sort()
            .join(', ')}) -> ${field.type}`,
      ),
    );
    expect(signatures.sort()).toEqual([
      'Catalog.catalogId() -> ID!',
      'Catalog.products(classificationGroupClassificationId: ID, classificationGroupId: ID, classificationId: ID, languageId: String, page: Int, pageSize: Int, sorting: String) -> JSON',
      'Classification.classificationId() -> ID!',
      'Classification.group(classificationGroupId: ID!, languageId: String, levels: Int) -> JSON',
      'Classification.groups(languageId: String, page: Int, pageSize: Int) -> JSON',
      'ClassificationGroup.classificationGroupId() -> ID!',
      'ClassificationGroup.classificationId() -> ID!',
      'ClassificationGroup.group(languageId: String, levels: Int) -> JSON',
      'ClassificationGroup.products(catalogId: ID!, languageId: String, page: Int, pageSize: Int, sorting: String) -> JSON',
    ]);
  });
});
