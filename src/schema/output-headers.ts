/**
 * The headers of the printed JSON (format version and kind, then the body), apart from the zod schemas: a command that
 * only reads a sealed profile and prints (whatif, gate) never loads zod. The types still come from the schemas (`import
 * type` loads nothing).
 */
import type { GateOutput, GateOutputBody } from './gate-output.js';
import type { MatrixOutput } from './matrix-output.js';
import { GATE_OUTPUT_VERSION, MATRIX_OUTPUT_VERSION, WHATIF_OUTPUT_VERSION } from './versions.js';
import type { WhatifOutput, WhatifOutputBody } from './whatif-output.js';

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
