/**
 * Where the what-if core's "not enough data" answer becomes what the user sees: its one-line reason and exit code 4
 * (MissingInput), as a UserError that main.ts prints without a stack trace.
 */
import { ExitCode, UserError } from '../errors.js';
import type { NotEnoughData } from '../whatif/model.js';

/** The error a command raises for a profile the model cannot fit. */
export function notEnoughDataError(answer: NotEnoughData): UserError {
  return new UserError(answer.reason, ExitCode.MissingInput);
}
