// Messages of the what-if knobs' flag errors, shown to users: one line each, with the cause and the fix (exit code 2
// for a flag that needs another, 3 for a value that does not parse).

/** Messages of the knobs' flag errors. */
export const KNOB_TEXT = {
  partitionedNeedsNodes: '--cache-policy partitioned spreads the dataset over several nodes: give --nodes 2 or more',
  unknownPolicy: (text: string, askable: readonly string[]) =>
    `--cache-policy: unknown policy '${text}'; use ${askable.join(', ')}`,
  coordinatedNeedsJobs: '--coordinated shares fetch and prep among jobs: give --jobs 2 or more',
  peerBwNeedsPartitioned:
    '--peer-bw is the network a partitioned cache fetches over: add --cache-policy partitioned and --nodes N',
  peerBwUnmeasured:
    "--cache-policy partitioned fetches a miss from a peer's cache: give --peer-bw RATE, the bytes/s one node " +
    'reads from another; a profile over several nodes measures it (docs/multi-node.md), this one has none',
  oneWorkersCount: (text: string) => `--workers takes one count here (whatif predicts one scenario), got '${text}'`,
  twoSaveModes: '--async-save and --sync-save ask for two save modes at once: give one',
  notBoolean: (flag: string, value: string) => `${flag}: '${value}' is not true or false`,
} as const;
