/**
 * The modes a job runs in, in the order profile runs them (DSA_MODE). Apart from the event schemas so that profile's
 * --help names them without loading zod.
 */
export const MODES = ['synthetic', 'cached', 'cold'] as const;
