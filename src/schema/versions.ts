/**
 * Format versions and the headers of the printed JSON, apart from the zod
 * schemas that define them (profile.ts, whatif-output.ts, matrix-output.ts,
 * gate-output.ts re-export them): a command that only reads a sealed profile
 * and prints (whatif, gate) never loads zod. The types still come from the
 * schemas (`import type` loads nothing).
 */
import type { GateOutput, GateOutputBody } from './gate-output.js';
import type { MatrixOutput } from './matrix-output.js';
import type { WhatifOutput, WhatifOutputBody } from './whatif-output.js';

/** Version of the profile file format; bump on any incompatible change. */
export const PROFILE_SCHEMA_VERSION = 1;

/** Version of whatif's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const WHATIF_OUTPUT_VERSION = 2;

/** Version of whatif --matrix's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const MATRIX_OUTPUT_VERSION = 1;

/** Version of gate's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const GATE_OUTPUT_VERSION = 1;

/** whatif --json's printed object: the header first, then the result, typed by WhatifOutputSchema. */
export function whatifOutput(body: WhatifOutputBody): WhatifOutput {
  return { schemaVersion: WHATIF_OUTPUT_VERSION, kind: 'whatif', ...body };
}

/** whatif --matrix --json's printed object: the header first, then the table, typed by MatrixOutputSchema. */
export function matrixOutput(body: Omit<MatrixOutput, 'schemaVersion' | 'kind'>): MatrixOutput {
  return { schemaVersion: MATRIX_OUTPUT_VERSION, kind: 'whatif-matrix', ...body };
}

/** gate --json's printed object: the header first, then the verdict, typed by GateOutputSchema. */
export function gateOutput(body: GateOutputBody): GateOutput {
  return { schemaVersion: GATE_OUTPUT_VERSION, kind: 'gate', ...body };
}
