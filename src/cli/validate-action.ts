import { join, relative, resolve } from 'node:path';
import { readProfile } from '../store/profile-store.js';
import { artefactsDir, newestProfile } from '../store/profile-files.js';
import { validateProgressHooks } from '../report/validate-progress.js';
import { renderValidation, renderValidationFailure } from '../report/validate-terminal.js';
import { runValidation, type ValidateInput } from '../validate/run-validate.js';
import { validationFailure } from '../validate/verdict.js';
import type { PointRequest } from '../validate/points.js';
import { VALIDATE_TEXT } from '../validate/validate-text.js';
import {
  parseCacheSize,
  parseCacheSizeList,
  parseCountList,
  parseDurationSec,
  parseFraction,
  parsePositiveInt,
  parseLatencySec,
  parseRate,
  type CacheSize,
} from '../units.js';
import { ExitCode, inputError, UserError } from '../errors.js';
import { validateOutput } from '../schema/validate-output.js';
import { isNotEnoughData } from '../whatif/model.js';
import type { Io } from './io.js';
import { dataSpecOf, openDataSource } from '../profile/data-sources/open-data-source.js';
import type { OpenedSource } from '../profile/data-sources/data-source.js';
import type { Profile } from '../schema/profile.js';
import { sourceOfProfile } from '../schema/profile-source.js';

/** Options of `validate` as commander hands them over (strings, unparsed). */
export interface RawValidateOptions {
  cache?: string;
  cpus?: string;
  workers?: string;
  storageBw?: string;
  writeBw?: string;
  latency?: string;
  cells?: string;
  keepReclaim?: boolean;
  epochs: string;
  precision: string;
  maxIterations: string;
  timeout: string;
  profilesDir: string;
  reportsDir: string;
  control: boolean;
  json?: boolean;
}

/**
 * What `validate` does once commander has parsed its flags: runs the points, compares them with the what-if, prints the
 * verdict.
 */
export async function validateAction(file: string | undefined, raw: RawValidateOptions, io: Io): Promise<ExitCode> {
  const { path, input } = parseValidateOptions(file, raw, io);
  const outcome = await runValidation(input, {
    ...validateProgressHooks(io.stderr, io.isTTY, input.epochs),
    onSignal: io.onSignal,
  });
  if (isNotEnoughData(outcome)) throw inputError(outcome.reason);
  const { report, plan } = outcome;
  // No plan: interrupted before its folder was made.
  if (plan.length > 0)
    io.stderr(
      `ds-analyzer: each point's job output and events are in ${relative(io.cwd, input.workDir) || input.workDir}\n`,
    );
  io.stdout(
    raw.json
      ? JSON.stringify(validateOutput({ profile: path, ...report }), null, 1) + '\n'
      : renderValidation(report, path),
  );
  const failure = validationFailure(report, plan.length);
  if (failure) throw new UserError(renderValidationFailure(failure), failure.exitCode);
  return ExitCode.Ok;
}

/**
 * The data the profile ran on: its folders, or its remote data named again from the profile (credentials come from the
 * environment, as the job's do: a URL's user and password are not in the profile).
 */
function profileDataSource(profile: Profile, path: string, env: NodeJS.ProcessEnv): OpenedSource {
  const cacheDir = join(artefactsDir(path), `validate-remote-cache-${process.pid}`);
  return openDataSource(dataSpecOf(sourceOfProfile(profile), env, cacheDir), { env });
}

/** --cells: CPUS@CACHE entries, e.g. 2@50%,1@8GiB. */
function parseCells(text: string): { cpus: number; cache: CacheSize }[] {
  return text.split(',').map((entry) => {
    const [cpus, cache, extra] = entry.trim().split('@');
    if (cache === undefined || extra !== undefined || cpus === '' || cache === '') {
      throw new UserError(VALIDATE_TEXT.notACell(entry.trim()), ExitCode.BadValue);
    }
    return {
      cpus: parsePositiveInt(cpus, `--cells ${entry.trim()}: the CPU count`),
      cache: parseCacheSize(cache, `--cells ${entry.trim()}: the cache`),
    };
  });
}

/** Turns commander's strings into validate's input; every error names its flag. */
function parseValidateOptions(
  file: string | undefined,
  raw: RawValidateOptions,
  io: Pick<Io, 'cwd' | 'env'>,
): { path: string; input: ValidateInput } {
  const list = <T>(text: string | undefined, parse: (item: string, flag: string) => T, flag: string): T[] =>
    text === undefined ? [] : text.split(',').map((item) => parse(item.trim(), flag));
  const request: PointRequest = {
    cacheSizes: raw.cache === undefined ? [] : parseCacheSizeList(raw.cache, '--cache', ['recommended'] as const),
    // Whether this machine has that many CPUs is checked when the point runs (affinity).
    cpuCounts: raw.cpus === undefined ? [] : parseCountList(raw.cpus, '--cpus', 1),
    workerCounts: raw.workers === undefined ? [] : parseCountList(raw.workers, '--workers'),
    bandwidths: list(raw.storageBw, parseRate, '--storage-bw'),
    writeBandwidths: list(raw.writeBw, parseRate, '--write-bw'),
    latencies: list(raw.latency, parseLatencySec, '--latency'),
    cells: raw.cells === undefined ? [] : parseCells(raw.cells),
    control: raw.control,
  };
  // The control alone is no question: it is what the points are measured against.
  if (!Object.values(request).some((points) => Array.isArray(points) && points.length > 0)) {
    throw new UserError(VALIDATE_TEXT.nothingAsked, ExitCode.Usage);
  }
  const path = file ? resolve(io.cwd, file) : newestProfile(resolve(io.cwd, raw.profilesDir));
  const profile = readProfile(path);
  const input: ValidateInput = {
    profile,
    // The profile's own data; validate's control and CPU points warm it, its cache points cap it.
    dataSource: profileDataSource(profile, path, io.env),
    request,
    epochs: parsePositiveInt(raw.epochs, '--epochs'),
    precision: parseFraction(raw.precision, '--precision'),
    maxIterations: parsePositiveInt(raw.maxIterations, '--max-iterations'),
    cwd: io.cwd,
    env: io.env,
    workDir: resolve(io.cwd, raw.reportsDir, `validate-${Date.now()}`),
    timeoutSec: parseDurationSec(raw.timeout, '--timeout'),
    pauseReclaim: !raw.keepReclaim,
  };
  return { path, input };
}
