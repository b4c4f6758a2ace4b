import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { MatrixOutputSchema } from '../../src/schema/matrix-output.js';
import { CompareOutputSchema } from '../../src/schema/compare-output.js';
import { DoctorOutputSchema } from '../../src/schema/doctor-output.js';
import { EventSchema } from '../../src/schema/events.js';
import { NodeIdentitySchema, NodeSchema } from '../../src/schema/profile.js';
import { GateOutputSchema } from '../../src/schema/gate-output.js';
import { ValidateOutputSchema } from '../../src/schema/validate-output.js';
import { WhatifOutputSchema } from '../../src/schema/whatif-output.js';

const DOC = readFileSync(fileURLToPath(new URL('../../../docs/json-output.md', import.meta.url)), 'utf8');

/** Every key of an object schema and of the objects inside it (arrays, unions, nullable and optional fields). */
function fieldNames(schema: z.ZodType, into = new Set<string>()): Set<string> {
  if (schema instanceof z.ZodObject) {
    for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      into.add(key);
      fieldNames(field, into);
    }
  } else if (schema instanceof z.ZodArray) fieldNames(schema.element as z.ZodType, into);
  else if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) fieldNames(schema.unwrap() as z.ZodType, into);
  else if (schema instanceof z.ZodUnion) for (const option of schema.options as z.ZodType[]) fieldNames(option, into);
  return into;
}

/** The text of the doc's `## \`heading\`` section, up to the next ## heading. */
function section(heading: string): string {
  const start = DOC.indexOf(`\n## \`${heading}\`\n`);
  assert.ok(start >= 0, `docs/json-output.md has a section '## \`${heading}\`'`);
  const end = DOC.indexOf('\n## ', start + 1);
  return DOC.slice(start, end < 0 ? undefined : end);
}

const HEADER = new Set(['schemaVersion', 'kind']);
const OUTPUTS: [string, z.ZodType][] = [
  ['whatif --json', WhatifOutputSchema],
  ['whatif --matrix --json', MatrixOutputSchema],
  ['gate --json', GateOutputSchema],
  ['compare --json', CompareOutputSchema],
  ['validate --json', ValidateOutputSchema],
  ['doctor --json', DoctorOutputSchema],
];

for (const [heading, schema] of OUTPUTS) {
  test(`docs/json-output.md documents every field of ${heading}`, () => {
    const text = section(heading);
    const names = [...fieldNames(schema)];
    assert.ok(names.length > 8, 'the walk found the fields');
    const missing = names.filter((name) => !HEADER.has(name) && !text.includes(`\`${name}\``));
    assert.deepEqual(missing, [], `fields of ${heading} not named in its section of docs/json-output.md`);
  });
}

test('docs/json-output.md names the header fields once for all', () => {
  for (const name of HEADER) assert.match(DOC, new RegExp(`\\| \`${name}\` \\|`));
});

test("docs/json-output.md names every field of the profile's nodes and of a rank's node", () => {
  const text = section('profile --json');
  const names = new Set([...fieldNames(NodeSchema), ...fieldNames(NodeIdentitySchema), 'host', 'nodes', 'node', 'rank', 'paceRank']);
  assert.ok(names.size > 12, 'the walk found the fields');
  const missing = [...names].filter((name) => !text.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'fields not named in the profile --json section of docs/json-output.md');
});

test('docs/protocol.md names every field of every event', () => {
  const protocol = readFileSync(fileURLToPath(new URL('../../../docs/protocol.md', import.meta.url)), 'utf8');
  const names = new Set<string>();
  for (const option of EventSchema.options) fieldNames(option, names);
  assert.ok(names.has('nodeRank') && names.has('hostname') && names.has('waitMs'), 'the walk found the fields');
  const missing = [...names].filter((name) => !protocol.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'event fields not named in docs/protocol.md');
});
