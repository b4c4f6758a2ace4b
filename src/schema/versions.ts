/**
 * Format versions, apart from the zod schemas that use them (profile.ts, whatif-output.ts, matrix-output.ts,
 * gate-output.ts re-export them): a command that only reads a sealed profile and prints (whatif, gate) never loads zod.
 * The headers of the printed JSON are in output-headers.ts.
 */

/** Version of the profile file format; bump on any incompatible change. */
export const PROFILE_SCHEMA_VERSION = 1;

/** Version of whatif's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const WHATIF_OUTPUT_VERSION = 2;

/** Version of whatif --matrix's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const MATRIX_OUTPUT_VERSION = 1;

/** Version of gate's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const GATE_OUTPUT_VERSION = 1;

/** Version of gate --history's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const HISTORY_OUTPUT_VERSION = 1;
