// Messages of whatif's flag errors beside the knobs' (whatif/knobs/knob-text.ts): the matrix's. One line each, with the
// cause and the fix.

/** Messages of whatif's own flag errors. */
export const WHATIF_TEXT = {
  matrixAxesWithoutMatrix: '--matrix-cpus and --matrix-cache set the grid of --matrix: add --matrix',
  matrixWithCpusOrCache:
    '--matrix sets CPUs and cache per cell: give the grid with --matrix-cpus and --matrix-cache instead of ' +
    '--cpus and --cache',
} as const;
