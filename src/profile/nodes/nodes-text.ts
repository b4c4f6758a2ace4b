// Messages of a profile on several nodes, shown to users: one line each, with the cause, the flag and the fix.
// node-plan.ts, the links and node-runs.ts decide; the words live here.

/** Messages of the nodes' plan, meeting point and merge (one line each: cause, flag, fix). */
export const NODES_TEXT = {
  coordinatorAlone:
    '--coordinator needs a job on several nodes: add --nnodes N (or run under torchrun --nnodes N or srun -N N)',
  tasksPerNode: (tasks: number) =>
    `srun started ${tasks} tasks per node, so ${tasks} profilers would switch each node's cache: ` +
    'run one per node (srun --ntasks-per-node=1 ds-analyzer profile ... -- ' +
    `torchrun --nproc_per_node ${tasks} train.py)`,
  noAddress: (nodes: number) =>
    `a profile of ${nodes} nodes needs the address where their profilers meet: ` +
    'pass --coordinator HOST:PORT (a port free on the first node), or run under torchrun with --rdzv-endpoint',
  loopback: (host: string) =>
    `the nodes' meeting address ${host} is loopback, which every node has: ` +
    "name an address of the first node the others reach (--coordinator HOST:PORT, or torchrun's --rdzv-endpoint)",
  elasticNodes: (text: string) =>
    `torchrun --nnodes ${text}: the profile needs a fixed node count to wait for every node: give --nnodes N (or N:N)`,
  notAddress: (flag: string, text: string) => `${flag} '${text}' is not HOST:PORT, e.g. 10.0.0.1:29401`,
  portTaken: (port: number, code: string) =>
    `cannot host the nodes' meeting point on port ${port}: ${code}: pick a free port with --coordinator HOST:PORT`,
  notOneJob: (why: string) =>
    `the nodes' results are not one job's (${why}): ` +
    'launch one job across the nodes (torchrun --nnodes, or srun) so each rank has its own RANK',
} as const;
