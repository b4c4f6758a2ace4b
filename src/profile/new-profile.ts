// The profile before its first run: the options, the host's and the dataset's facts, no mode yet.
import { localNode } from '../analysis/merge-nodes.js';
import { sizeHistogram } from '../analysis/size-histogram.js';
import { PROFILE_SCHEMA_VERSION, type Profile } from '../schema/profile.js';
import { commandWithoutSecrets } from '../store/redact.js';
import type { Dataset } from '../system/dataset/dataset.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { ProfileRunInput } from './profile-input.js';

/** The profile before its first run: options, host and dataset facts, no mode yet. */
export function newProfile(
  input: ProfileRunInput,
  passes: number,
  host: Profile['host'],
  dataset: Dataset,
  warnings: string[],
): Profile {
  return {
    schemaVersion: PROFILE_SCHEMA_VERSION,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    createdAt: new Date().toISOString(),
    status: 'partial',
    jobName: input.jobName,
    // Credentials in URLs and environment assignments are never written, --redact or not.
    command: commandWithoutSecrets(input.argv),
    options: {
      data: input.dataRoots,
      ...(input.remote ? { remote: input.remote } : {}),
      precision: input.precision,
      maxIterations: input.maxIterations,
      timeoutSec: input.timeoutSec,
      storageBwBytesPerSec: input.storageBwBytesPerSec,
      dropCaches: input.dropCaches,
      modes: input.modes,
      passes,
    },
    // The data as one value, recorded by the source that listed it (the old fields stay, for older readers).
    ...(dataset.source ? { source: dataset.source } : {}),
    host,
    nodes: [localNode(host, [])],
    dataset: datasetFacts(dataset),
    modes: {},
    analysis: null,
    warnings,
  };
}

function datasetFacts(dataset: Dataset): Profile['dataset'] {
  return {
    roots: dataset.roots,
    files: dataset.files.length,
    bytes: dataset.bytes,
    meanFileBytes: dataset.meanFileBytes,
    fileBytesQuantiles: dataset.fileBytesQuantiles,
    device: dataset.device,
    fitsInMemory: dataset.fitsInMemory,
    fileBytesHistogram: sizeHistogram(dataset.files.map((file) => file.bytes)),
    memoryBudgetBytes: dataset.memoryBudgetBytes,
    ...(dataset.memoryBudgetSource !== undefined ? { memoryBudgetSource: dataset.memoryBudgetSource } : {}),
    ...(dataset.remote ? { remote: dataset.remote } : {}),
    ...(dataset.mount ? { mount: dataset.mount } : {}),
  };
}
