import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { MatrixOutputSchema } from '../../src/schema/matrix-output.js';
import { CompareOutputSchema } from '../../src/schema/compare-output.js';
import { DoctorOutputSchema } from '../../src/schema/doctor-output.js';
import { EventSchema, StagesEventSchema } from '../../src/schema/events.js';
import {
  AnalysisSchema,
  BoundaryStallSchema,
  CheckpointRecordSchema,
  CheckpointStallSchema,
  DataSourceRecordSchema,
  EpochRecordSchema,
  EstimateSchema,
  FirstBatchSchema,
  HostSchema,
  IterationSchema,
  IterationSummarySchema,
  ModeResultSchema,
  NetworkUseSchema,
  NodeIdentitySchema,
  NodeSchema,
  PassSchema,
  PrepStagesSchema,
  ProfileSchema,
  RankResultSchema,
  ResourceSampleSchema,
  StateProofSchema,
  StorageProbeSchema,
  StragglerSchema,
  SubsetSchema,
} from '../../src/schema/profile.js';
import { GateOutputSchema } from '../../src/schema/gate-output.js';
import { HistoryOutputSchema } from '../../src/schema/history-output.js';
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
  else if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    fieldNames(schema.unwrap() as z.ZodType, into);
  else if (schema instanceof z.ZodUnion) for (const option of schema.options as z.ZodType[]) fieldNames(option, into);
  return into;
}

/**
 * The keys of an object schema itself (through optional, nullable and default wrappers), not of the objects inside it.
 */
function ownKeys(schema: z.ZodType): string[] {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    return ownKeys(schema.unwrap() as z.ZodType);
  assert.ok(schema instanceof z.ZodObject, 'an object schema');
  return Object.keys(schema.shape as Record<string, z.ZodType>);
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
  ['gate --history --json', HistoryOutputSchema],
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
  const names = new Set([
    ...fieldNames(NodeSchema),
    ...fieldNames(NodeIdentitySchema),
    'host',
    'nodes',
    'node',
    'rank',
    'paceRank',
  ]);
  assert.ok(names.size > 12, 'the walk found the fields');
  const missing = [...names].filter((name) => !text.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'fields not named in the profile --json section of docs/json-output.md');
});

test('docs/json-output.md names every field of the profile in its profile --json section', () => {
  const text = section('profile --json');
  const names = [...fieldNames(ProfileSchema)];
  // The walk reaches every part: modes, ranks, iterations, checkpoints, epochs, the probes and the analysis.
  for (const name of [
    'schemaVersion',
    'warmup',
    'blockingMs',
    'createMs',
    'residentShare',
    'firstByteMs',
    'syntheticSaves',
    'perEpochMs',
    'leastWaitingRank',
    'slopePctPerMin',
  ]) {
    assert.ok(names.includes(name), `the walk found '${name}'`);
  }
  assert.ok(names.length > 200, `the walk found the fields (${names.length})`);
  const missing = names.filter((name) => !text.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'fields of the profile not named in the profile --json section of docs/json-output.md');
});

/** Each object of the profile, and the `### ` heading of the profile section whose text must name its own keys. */
const PROFILE_OBJECTS: [string, z.ZodType | string[]][] = [
  ['Top level', ProfileSchema],
  ['`options`', ProfileSchema.shape.options],
  ['`source`', [...new Set(DataSourceRecordSchema.options.flatMap((kind) => Object.keys(kind.shape)))]],
  ['`host` and `nodes[]`', NodeSchema],
  ['`host` and `nodes[]`', HostSchema],
  ['`dataset`', ProfileSchema.shape.dataset],
  ['`modes.<mode>`', ModeResultSchema],
  ['`ranks[]`', RankResultSchema],
  ['`iterations[]`', IterationSchema],
  ['`checkpoints[]` and `epochs[]`', CheckpointRecordSchema],
  ['`checkpoints[]` and `epochs[]`', EpochRecordSchema],
  ['`summary` and estimates', IterationSummarySchema],
  ['`summary` and estimates', EstimateSchema],
  ['`state`', StateProofSchema],
  ['`passes[]` and `firstBatch`', PassSchema],
  ['`passes[]` and `firstBatch`', FirstBatchSchema],
  ['`subset`', SubsetSchema],
  ['`network`', NetworkUseSchema],
  ['`resources[]`', ResourceSampleSchema],
  [
    '`cpuSweep`, `workersSweep`, `overlapProbe`',
    [
      'cpuSweep',
      'workersSweep',
      'overlapProbe',
      ...ownKeys(ProfileSchema.shape.overlapProbe).filter((key) => !(key in ModeResultSchema.shape)),
    ],
  ],
  ['`storageProbe`', StorageProbeSchema],
  ['`analysis`', AnalysisSchema],
  ['`analysis.straggler`', StragglerSchema],
  ['`analysis.prepStages`', PrepStagesSchema],
  ['`analysis.checkpointStall`', CheckpointStallSchema],
  ['`analysis.boundaryStall`', BoundaryStallSchema],
];

/** The text of a `### heading` inside the profile --json section, up to the next ### or ## heading. */
function profileSubsection(heading: string): string {
  const text = section('profile --json');
  const start = text.indexOf(`\n### ${heading}\n`);
  assert.ok(start >= 0, `the profile --json section has a subsection '### ${heading}'`);
  const next = text.slice(start + 1).search(/\n##+ /);
  return text.slice(start, next < 0 ? undefined : start + 1 + next);
}

for (const [heading, keys] of PROFILE_OBJECTS) {
  test(`docs/json-output.md names each key of the profile's ${heading} in its own subsection`, () => {
    const text = profileSubsection(heading);
    const names = Array.isArray(keys) ? keys : ownKeys(keys);
    assert.ok(names.length > 0, 'the keys were found');
    const missing = names.filter((name) => !text.includes(`\`${name}\``));
    assert.deepEqual(
      missing,
      [],
      `keys not named under '### ${heading}' in the profile --json section of docs/json-output.md`,
    );
  });
}

test('docs/protocol.md names every field of every event', () => {
  const protocol = readFileSync(fileURLToPath(new URL('../../../docs/protocol.md', import.meta.url)), 'utf8');
  const names = new Set<string>();
  for (const option of [...EventSchema.options, StagesEventSchema]) fieldNames(option, names);
  assert.ok(names.has('nodeRank') && names.has('hostname') && names.has('waitMs'), 'the walk found the fields');
  const missing = [...names].filter((name) => !protocol.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'event fields not named in docs/protocol.md');
});
