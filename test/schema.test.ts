import { readFileSync } from 'node:fs';
import { buildSchema, printSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../src/schema/index.ts';

const committed = readFileSync(new URL('../schema.graphql', import.meta.url), 'utf8');

describe('schema.graphql', () => {
  it('is the schema the code builds (run `npm run codegen` after changing it)', () => {
    expect(printSchema(buildSchema(committed))).toBe(printSchema(schema));
  });

  it('describes every field and argument', () => {
    const fields = schema.getQueryType()!.getFields();
    for (const field of ['catalogProducts', 'classificationGroup', 'classificationGroups'].map(
      (name) => fields[name]!,
    )) {
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
});
