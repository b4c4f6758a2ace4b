import { resolve } from 'node:path';
import { ExitCode } from '../errors.js';
import { reclaimPauseFile, toolCacheDir } from '../paths.js';
import { runClean, type CleanInput } from '../clean/run-clean.js';
import { renderClean } from '../report/clean-terminal.js';
import { cgroupRoots, detectCgroups } from '../system/cgroups/cgroups.js';
import { realCgroupFs, type CgroupFs } from '../system/cgroups/leftovers.js';
import type { Io } from './io.js';

/** Where clean finds cgroups, and how it touches them: the machine's, or a fake in tests. */
export interface CleanMachine {
  /** The folders job cgroups are made in. */
  cgroupRoots(io: Io): string[];
  /** Cgroups and processes. */
  cgroupFs: CgroupFs;
}

const realMachine: CleanMachine = {
  cgroupRoots: (io) => cgroupRoots(detectCgroups({ v2Parent: io.env.DSA_CGROUP_PARENT })),
  cgroupFs: realCgroupFs,
};

/** Options of `clean` as commander hands them over. */
export interface RawCleanOptions {
  dryRun?: boolean;
  force?: boolean;
  cache?: boolean;
  artifacts?: boolean;
  profilesDir: string;
  reportsDir: string;
}

/** What `clean` does once commander has parsed its flags, on `machine` (this machine's cgroups when none is given). */
export async function cleanAction(
  raw: RawCleanOptions,
  io: Io,
  machine: CleanMachine = realMachine,
): Promise<ExitCode> {
  const input: CleanInput = {
    cgroupRoots: machine.cgroupRoots(io),
    cgroupFs: machine.cgroupFs,
    reclaimPauseFile: reclaimPauseFile(io.env),
    cacheDir: toolCacheDir(io.env),
    profilesDir: resolve(io.cwd, raw.profilesDir),
    reportsDir: resolve(io.cwd, raw.reportsDir),
    dryRun: Boolean(raw.dryRun),
    force: Boolean(raw.force),
    cache: Boolean(raw.cache),
    artifacts: Boolean(raw.artifacts),
  };
  const cleaned = await runClean(input);
  io.stdout(renderClean(cleaned));
  return cleaned.failed ? ExitCode.Environment : ExitCode.Ok;
}
