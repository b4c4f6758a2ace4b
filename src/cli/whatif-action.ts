import { resolve } from 'node:path';
import { ExitCode, inputError, UserError } from '../errors.js';
import { loadProfile, newestProfile } from '../store/profile-files.js';
import { renderWhatif } from '../report/whatif-terminal.js';
import { matrixOutput, whatifOutput } from '../schema/output-headers.js';
import { parseCacheSizeList, parseCountList, resolveCacheSize, type CacheSize } from '../units.js';
import { fitModel, isNotEnoughData } from '../whatif/model.js';
import type { RawKnobFlags } from '../whatif/knobs/knob.js';
import { parseKnobFlags, profileDefaults, resolveAgainstProfile, type KnobQuery } from '../whatif/knobs/query.js';
import type { Profile } from '../schema/profile.js';
import type { Io } from './io.js';
import { WHATIF_TEXT } from './whatif-text.js';
import { whatif } from '../whatif/whatif.js';
import { parsePipelineFlags } from '../whatif/knobs/pipeline.js';

/** Options of `whatif` as commander hands them over (strings, unparsed): the knobs' (src/whatif/knobs/) and these. */
export type RawWhatifOptions = RawKnobFlags & {
  matrix?: boolean;
  matrixCpus?: string;
  matrixCache?: string;
  profilesDir: string;
  json?: boolean;
};

/** What `whatif` does once commander has parsed its flags: predict from the profile, print, return the exit code. */
export async function whatifAction(profileArg: string | undefined, raw: RawWhatifOptions, io: Io): Promise<ExitCode> {
  const asked = parseKnobFlags(raw);
  if (!raw.matrix && (raw.matrixCpus !== undefined || raw.matrixCache !== undefined)) {
    throw new UserError(WHATIF_TEXT.matrixAxesWithoutMatrix, ExitCode.Usage);
  }
  const pipelineQuery = parsePipelineFlags(raw);
  const path = profileArg ? resolve(io.cwd, profileArg) : newestProfile(resolve(io.cwd, raw.profilesDir));
  const profile = await loadProfile(path);
  profileDefaults(asked, profile);
  if (raw.matrix) return printMatrix(profile, path, asked, raw, io);
  resolveAgainstProfile(asked, profile);
  const outcome = whatif(profile, path, asked.query, {}, pipelineQuery);
  if (isNotEnoughData(outcome)) throw inputError(outcome.reason);
  if (raw.json) io.stdout(JSON.stringify(whatifOutput(outcome), null, 1) + '\n');
  else io.stdout(renderWhatif(outcome));
  return ExitCode.Ok;
}

/**
 * whatif --matrix: the table over the grid asked (its axes replace --cpus and --cache), as text or versioned JSON. Its
 * modules load only here.
 */
async function printMatrix(
  profile: Profile,
  path: string,
  { query, given }: KnobQuery,
  raw: RawWhatifOptions,
  io: Io,
): Promise<ExitCode> {
  // The grid's axes are the CPUs and cache knobs' settings, cell by cell.
  if (given.some(({ knob }) => knob.field === 'cpus' || knob.field === 'cacheBytes')) {
    throw new UserError(WHATIF_TEXT.matrixWithCpusOrCache, ExitCode.Usage);
  }
  const fit = fitModel(profile);
  if (fit.kind === 'not-enough-data') throw inputError(fit.reason);
  const axes = {
    ...(raw.matrixCpus !== undefined ? { cpus: parseCountList(raw.matrixCpus, '--matrix-cpus', 1) } : {}),
    ...(raw.matrixCache !== undefined
      ? {
          cacheBytes: parseCacheSizeList(raw.matrixCache, '--matrix-cache').map((size) =>
            resolveCacheSize(size as CacheSize, profile.dataset.bytes),
          ),
        }
      : {}),
  };
  const [{ whatifMatrix }, { renderMatrix }] = await Promise.all([
    import('../whatif/matrix.js'),
    import('../report/matrix-terminal.js'),
  ]);
  const matrix = whatifMatrix(fit.model, { path, jobName: profile.jobName }, axes, query);
  io.stdout(raw.json ? JSON.stringify(matrixOutput(matrix), null, 1) + '\n' : renderMatrix(matrix));
  return ExitCode.Ok;
}
