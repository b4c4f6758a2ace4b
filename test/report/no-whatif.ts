// A what-if source with no curves: the report then shows its what-if section with this reason.
import type { Profile } from '../../src/schema/profile.js';
import type { WhatIfCurvesOrReason } from '../../src/report/whatif-source.js';

export const noWhatIf = (_profile?: Profile): WhatIfCurvesOrReason => ({
  available: false,
  reason: 'what-if model not available in this test',
});
