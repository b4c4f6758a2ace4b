import { resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { diagnose, missingRequired, type Diagnosis, type DiagnoseInput } from '../system/probes/diagnose.js';
import {
  CAPABILITY_NAMES,
  requiredMissingText,
  unknownCapabilityText,
  type CapabilityName,
} from '../system/probes/capability-text.js';
import { doctorJson, renderDoctor } from '../report/doctor-terminal.js';
import type { Io } from './io.js';

/** Options of `doctor` as commander hands them over. */
export interface RawDoctorOptions {
  json?: boolean;
  data?: string[];
  require?: string;
  python?: string;
}

/**
 * What `doctor` does once commander has parsed its flags: probes the machine with `diagnoseMachine` (the real probes
 * when none is given), prints, returns the exit code.
 */
export async function doctorAction(
  options: RawDoctorOptions,
  io: Io,
  diagnoseMachine: (input: DiagnoseInput) => Promise<Diagnosis> = diagnose,
): Promise<ExitCode> {
  const required = options.require === undefined ? [] : parseCapabilityList(options.require);
  const diagnosis = await diagnoseMachine({
    nvidiaSmi: io.env.DSA_NVIDIA_SMI ?? 'nvidia-smi',
    cwd: io.cwd,
    cgroupParent: io.env.DSA_CGROUP_PARENT,
    dataDirs: options.data ? options.data.map((dir) => resolve(io.cwd, dir)) : null,
    env: io.env,
    ...(options.python !== undefined ? { python: options.python } : {}),
  });
  io.stdout(options.json ? JSON.stringify(doctorJson(diagnosis, required), null, 1) + '\n' : renderDoctor(diagnosis));
  const missing = missingRequired(diagnosis, required);
  if (missing.length > 0)
    io.stderr(
      `ds-analyzer: ${requiredMissingText(
        missing.map((c) => c.name),
        Boolean(options.json),
      )}\n`,
    );
  return missing.length > 0 ? ExitCode.MissingCapability : ExitCode.Ok;
}

/** --require: capability names, comma-separated; an unknown one is exit code 3. */
function parseCapabilityList(text: string): CapabilityName[] {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(CAPABILITY_NAMES as readonly string[]).includes(name))
      throw new UserError(unknownCapabilityText(name), ExitCode.BadValue);
  }
  if (names.length === 0) throw new UserError(unknownCapabilityText(text), ExitCode.BadValue);
  return [...new Set(names)] as CapabilityName[];
}
