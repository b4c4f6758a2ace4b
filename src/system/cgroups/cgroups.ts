// Job cgroups: throttle the job's storage reads (blkio/io), cap its page cache (memory) and restrict its CPUs (cpuset),
// so what-if predictions can be checked against real runs, on cgroup v1 or v2.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { CGROUP_TEXT } from './cgroup-text.js';
import { canWrite, readTextOrNull } from '../kernel/read-text.js';
import { errorCode } from '../kernel/errno.js';
import { parseMountinfo } from '../kernel/mountinfo.js';
import { emptyAndRemove, JOB_CGROUP_PREFIX, realCgroupFs } from './leftovers.js';

/** Controllers the job cgroup can use; 'io' is called blkio on cgroup v1. */
export type CgroupController = 'io' | 'memory' | 'cpuset';
const CONTROLLERS: CgroupController[] = ['io', 'memory', 'cpuset'];
const V1_NAME: Record<CgroupController, string> = { io: 'blkio', memory: 'memory', cpuset: 'cpuset' };

/** What this process can do with one controller. */
export interface ControllerStatus {
  /** Hierarchy the controller is on, or null when it is not available. */
  version: 'v1' | 'v2' | null;
  /** Whether a child group with this controller can be created (as far as can be told without writing). */
  writable: boolean;
  /** Directory under which a job group would be created. */
  parentDir: string | null;
  /** One line on why it is (not) usable. */
  reason: string;
}

/** The cgroup setup of this machine as this process sees it. */
export interface CgroupInfo {
  /** v1 when any controller is on a v1 hierarchy (hybrid setups included), v2 when only the unified one exists. */
  version: 'v1' | 'v2' | 'none';
  /** Per-controller status: io (blkio on v1), memory, cpuset. */
  controllers: Record<CgroupController, ControllerStatus>;
}

/** Parses /proc/self/cgroup into controller list -> path ('' key for the v2 line). */
export function parseProcCgroup(text: string): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    if (match[1] === '') paths.set('', match[2]);
    for (const controller of match[1].split(',')) if (controller) paths.set(controller, match[2]);
  }
  return paths;
}

function words(path: string): string[] {
  return (readTextOrNull(path) ?? '').trim().split(/\s+/).filter(Boolean);
}

/** Why a v2 group cannot host a child with `controllers`, or null when it can. */
function v2Obstacle(dir: string, controllers: CgroupController[]): string | null {
  if (!existsSync(join(dir, 'cgroup.controllers'))) return `${dir} is not a cgroup v2 group`;
  const offered = words(join(dir, 'cgroup.controllers'));
  const missing = controllers.filter((c) => !offered.includes(c));
  if (missing.length > 0) return `${dir} does not offer ${missing.join(', ')}`;
  if (!canWrite(dir)) return `${dir} is not writable by this user`;
  const enabled = words(join(dir, 'cgroup.subtree_control'));
  if (controllers.every((c) => enabled.includes(c))) return null;
  if (!canWrite(join(dir, 'cgroup.subtree_control'))) return `cannot enable ${controllers.join(', ')} in ${dir}`;
  // The no-internal-process rule: only the root group may have members and controllers enabled for children.
  const isRoot = !existsSync(join(dir, 'cgroup.type'));
  if (!isRoot && words(join(dir, 'cgroup.procs')).length > 0) {
    return `${dir} has member processes, so its children cannot get ${controllers.join(', ')}`;
  }
  return null;
}

/** Candidate v2 parents, best first: an explicit one, then the parent of our group, then our group. */
function v2Candidates(mountPoint: string, selfPath: string, explicit: string | undefined): string[] {
  const candidates: string[] = [];
  if (explicit) candidates.push(explicit);
  const own = join(mountPoint, selfPath);
  if (selfPath !== '/' && selfPath !== '') candidates.push(dirname(own));
  candidates.push(own);
  return [...new Set(candidates)];
}

/** Inputs of detection, injectable for tests. */
export interface CgroupSources {
  /** Text of /proc/self/mountinfo. */
  mountinfo?: string;
  /** Text of /proc/self/cgroup. */
  procCgroup?: string;
  /** A delegated v2 group to create job groups under (DSA_CGROUP_PARENT of the caller's environment). */
  v2Parent?: string;
}

/** Detects the cgroup version and which controllers this process can use; reads only, never throws. */
export function detectCgroups(sources: CgroupSources = {}): CgroupInfo {
  const mounts = parseMountinfo(sources.mountinfo ?? readTextOrNull('/proc/self/mountinfo') ?? '');
  const selfPaths = parseProcCgroup(sources.procCgroup ?? readTextOrNull('/proc/self/cgroup') ?? '');
  const v2Parent = sources.v2Parent;
  const v1Mounts = mounts.filter((m) => m.type === 'cgroup');
  const v2Mount = mounts.find((m) => m.type === 'cgroup2');
  const anyV1Controller = v1Mounts.some((m) =>
    m.superOptions.some(
      (o) => Object.values(V1_NAME).includes(o) || ['cpu', 'cpuacct', 'pids', 'devices', 'freezer'].includes(o),
    ),
  );

  const controllers = {} as Record<CgroupController, ControllerStatus>;
  for (const controller of CONTROLLERS) {
    const v1 = v1Mounts.find((m) => m.superOptions.includes(V1_NAME[controller]));
    if (v1) {
      const writable = canWrite(v1.mountPoint);
      controllers[controller] = {
        version: 'v1',
        writable,
        parentDir: v1.mountPoint,
        reason: writable
          ? `v1 ${V1_NAME[controller]} at ${v1.mountPoint}`
          : CGROUP_TEXT.notWritable(V1_NAME[controller], v1.mountPoint),
      };
      continue;
    }
    if (v2Mount && existsSync(join(v2Mount.mountPoint, 'cgroup.controllers'))) {
      const selfPath = selfPaths.get('') ?? '/';
      const obstacles: string[] = [];
      let chosen: string | null = null;
      for (const dir of v2Candidates(v2Mount.mountPoint, selfPath, v2Parent)) {
        const obstacle = v2Obstacle(dir, [controller]);
        if (obstacle === null) {
          chosen = dir;
          break;
        }
        obstacles.push(obstacle);
      }
      const offered = words(join(v2Mount.mountPoint, 'cgroup.controllers')).includes(controller);
      controllers[controller] = {
        version: offered || chosen ? 'v2' : null,
        writable: chosen !== null,
        parentDir: chosen,
        reason: chosen ? `v2 ${controller} under ${chosen}` : CGROUP_TEXT.v2NoParent(controller, obstacles.join('; ')),
      };
      continue;
    }
    controllers[controller] = {
      version: null,
      writable: false,
      parentDir: null,
      reason: CGROUP_TEXT.notAvailable(controller),
    };
  }
  const version = anyV1Controller ? 'v1' : v2Mount ? 'v2' : 'none';
  return { version, controllers };
}

/** A job group created for one run. */
export interface JobCgroup {
  /** Group directories (one per controller on v1, one on v2). */
  dirs: string[];
  /** cgroup.procs files the job must join (see wrapCommand). */
  procsFiles: string[];
  /** Waits until the group is empty, then removes it; a UserError when processes are still in it after `timeoutMs`. */
  remove(options?: { timeoutMs?: number }): Promise<void>;
}

/** The prefix of every group createJobCgroup makes (clean finds the ones left behind by it: leftovers.ts). */
export interface JobCgroupOptions {
  /** Suffix of the group name: ds-analyzer-<name>. */
  name: string;
  /** Read throttle of a whole block device ('major:minor'), bytes/s. */
  readBpsDevice?: { device: string; bytesPerSec: number };
  /** Write throttle of whole block devices ('major:minor' each), bytes/s on each. */
  writeBpsDevices?: { devices: string[]; bytesPerSec: number };
  /** Memory (and so page cache) limit of the group, bytes. */
  memoryLimitBytes?: number;
  /** CPUs the job may run on. */
  cpus?: number[];
  /** Detected setup (default: detectCgroups() with v2Parent). */
  cgroups?: CgroupInfo;
  /** A delegated v2 group to create the group under (DSA_CGROUP_PARENT of the caller's environment). */
  v2Parent?: string;
}

function envError(cause: string): UserError {
  return new UserError(CGROUP_TEXT.withFix(cause), ExitCode.Environment);
}

/** The error's code, with what EINVAL means for a cgroup file. */
function errorText(error: unknown): string {
  const code = errorCode(error);
  return code === 'EINVAL' ? CGROUP_TEXT.einval : code;
}

function write(file: string, value: string): void {
  try {
    writeFileSync(file, value);
  } catch (error) {
    throw envError(CGROUP_TEXT.setFailed(file, value, errorText(error)));
  }
}

/** Creates ds-analyzer-<name> with the requested limits; throws a UserError (Environment) when not permitted. */
export function createJobCgroup(options: JobCgroupOptions): JobCgroup {
  const needed = neededControllers(options);
  const info = options.cgroups ?? detectCgroups({ v2Parent: options.v2Parent });
  for (const controller of needed) {
    const status = info.controllers[controller];
    if (info.version === 'none') throw envError(CGROUP_TEXT.noCgroups);
    if (!status.version) throw envError(CGROUP_TEXT.notAvailable(controller));
    if (!status.writable || !status.parentDir) throw envError(status.reason);
  }
  const created: string[] = [];
  let dirFor: Map<CgroupController, string>;
  try {
    dirFor = makeGroups(info, needed, `${JOB_CGROUP_PREFIX}${options.name}`, created);
    setLimits(options, info, dirFor);
  } catch (error) {
    for (const dir of created.reverse()) realCgroupFs.remove(dir); // best effort
    throw error;
  }
  const dirs = [...new Set(dirFor.values())];
  return {
    dirs,
    procsFiles: dirs.map((dir) => join(dir, 'cgroup.procs')),
    remove: (removeOptions = {}) => removeGroups(dirs, removeOptions.timeoutMs ?? 30_000),
  };
}

/** The controllers the limits need, once the name and devices are checked. */
function neededControllers(options: JobCgroupOptions): CgroupController[] {
  if (!/^[A-Za-z0-9_.-]+$/.test(options.name)) throw new UserError(CGROUP_TEXT.badName(options.name));
  const devices = [
    ...(options.readBpsDevice ? [options.readBpsDevice.device] : []),
    ...(options.writeBpsDevices?.devices ?? []),
  ];
  const bad = devices.find((d) => !/^\d+:\d+$/.test(d));
  if (bad !== undefined) throw new UserError(CGROUP_TEXT.badDevice(bad));
  const needed: CgroupController[] = [];
  if (options.readBpsDevice || options.writeBpsDevices) needed.push('io');
  if (options.memoryLimitBytes !== undefined) needed.push('memory');
  if (options.cpus !== undefined) needed.push('cpuset');
  return needed;
}

/** The group's folder under each needed controller, made where missing; `created` lists those made, to roll back. */
function makeGroups(
  info: CgroupInfo,
  needed: CgroupController[],
  groupName: string,
  created: string[],
): Map<CgroupController, string> {
  const dirFor = new Map<CgroupController, string>();
  const makeGroup = (parent: string): string => {
    const dir = join(parent, groupName);
    if (!created.includes(dir)) {
      try {
        mkdirSync(dir);
        created.push(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw envError(CGROUP_TEXT.createFailed(dir, errorText(error)));
        }
      }
    }
    return dir;
  };
  const v2 = needed.filter((c) => info.controllers[c].version === 'v2');
  if (v2.length > 0) {
    // One v2 group for all controllers; its parent must offer them all.
    const parent = info.controllers[v2[0]].parentDir!;
    const obstacle = v2Obstacle(parent, v2);
    if (obstacle) throw envError(obstacle);
    const enabled = words(join(parent, 'cgroup.subtree_control'));
    const toEnable = v2.filter((c) => !enabled.includes(c));
    if (toEnable.length > 0) write(join(parent, 'cgroup.subtree_control'), toEnable.map((c) => `+${c}`).join(' '));
    const dir = makeGroup(parent);
    for (const c of v2) dirFor.set(c, dir);
  }
  for (const c of needed.filter((c) => info.controllers[c].version === 'v1')) {
    dirFor.set(c, makeGroup(info.controllers[c].parentDir!));
  }
  return dirFor;
}

/** Writes each asked limit into its controller's file (v1 and v2 name them differently). */
function setLimits(options: JobCgroupOptions, info: CgroupInfo, dirFor: Map<CgroupController, string>): void {
  const io = info.controllers.io.version;
  if (options.readBpsDevice) {
    const { device: dev, bytesPerSec } = options.readBpsDevice;
    const rate = Math.max(1, Math.round(bytesPerSec));
    if (io === 'v1') write(join(dirFor.get('io')!, 'blkio.throttle.read_bps_device'), `${dev} ${rate}`);
    else write(join(dirFor.get('io')!, 'io.max'), `${dev} rbps=${rate}`);
  }
  if (options.writeBpsDevices) {
    const dir = dirFor.get('io')!;
    const rate = Math.max(1, Math.round(options.writeBpsDevices.bytesPerSec));
    // One device a write: both files take one 'MAJ:MIN ...' line at a time.
    for (const dev of options.writeBpsDevices.devices) {
      if (io === 'v1') write(join(dir, 'blkio.throttle.write_bps_device'), `${dev} ${rate}`);
      else write(join(dir, 'io.max'), `${dev} wbps=${rate}`);
    }
  }
  if (options.memoryLimitBytes !== undefined) {
    const bytes = String(Math.max(1, Math.round(options.memoryLimitBytes)));
    const file = info.controllers.memory.version === 'v1' ? 'memory.limit_in_bytes' : 'memory.max';
    write(join(dirFor.get('memory')!, file), bytes);
  }
  if (options.cpus !== undefined) {
    const dir = dirFor.get('cpuset')!;
    if (info.controllers.cpuset.version === 'v1') {
      // A v1 cpuset group accepts no task until both cpus and mems are set.
      const mems = (readTextOrNull(join(dirname(dir), 'cpuset.mems')) ?? '0').trim() || '0';
      write(join(dir, 'cpuset.mems'), mems);
    }
    write(join(dir, 'cpuset.cpus'), options.cpus.join(','));
  }
}

/** Removes each group once its processes have left (exit in progress: EBUSY); a UserError if one stays past `timeoutMs`. */
async function removeGroups(dirs: string[], timeoutMs: number): Promise<void> {
  // The job's processes are its own to end: nothing is killed here. One deadline for all the groups, not one each.
  const fs = { ...realCgroupFs, kill: () => false };
  const deadline = Date.now() + timeoutMs;
  for (const dir of dirs) {
    const { error } = await emptyAndRemove(dir, fs, Math.max(0, deadline - Date.now()));
    if (error !== null) throw new UserError(CGROUP_TEXT.notEmpty(dir), ExitCode.Environment);
  }
}

// Joins each cgroup.procs given before '--' with the shell's pid, which exec keeps: the job is in its groups from its
// first instruction. User arguments reach the script only as "$@".
const JOIN_SCRIPT =
  `for f do [ "$f" = -- ] && break; echo $$ > "$f" || { echo "${CGROUP_TEXT.joinFailed} $f" ` +
  `>&2; exit 126; }; shift; done; shift; exec "$@"`;

/** An argument array that joins `procsFiles` and then execs `argv` (nothing is interpolated into a script). */
export function wrapCommand(procsFiles: string[], argv: string[]): string[] {
  if (argv.length === 0) throw new UserError(CGROUP_TEXT.noCommand);
  if (procsFiles.some((f) => f === '--')) throw new UserError(CGROUP_TEXT.badProcsPath);
  return ['sh', '-c', JOIN_SCRIPT, 'sh', ...procsFiles, '--', ...argv];
}

/** Where job groups are made: each controller's parent (v1 mounts, the v2 group chosen), each once. */
export function cgroupRoots(info: CgroupInfo): string[] {
  return [...new Set(Object.values(info.controllers).flatMap((c) => (c.parentDir ? [c.parentDir] : [])))];
}
