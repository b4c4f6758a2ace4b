/**
 * A deterministic CgroupFs for tests of clean: groups, their processes and live commands in memory; a kill empties the
 * process out of its group at once.
 */
import { dirname, basename } from 'node:path';
import type { CgroupFs } from '../../src/system/cgroups/leftovers.js';

/** The fake's state, open for tests to set up and inspect. */
export interface FakeCgroupState {
  /** Group directory -> the pids inside it. */
  groups: Map<string, number[]>;
  /** Live pid -> its command line. */
  commands: Map<number, string>;
  /** Pids killed, in order. */
  killed: number[];
  /** Groups whose removal fails with this errno code. */
  refuse: Map<string, string>;
}

/** A fake CgroupFs over `state`. */
export function fakeCgroupFs(state: FakeCgroupState): CgroupFs {
  return {
    children: (dir) => [...state.groups.keys()].filter((g) => dirname(g) === dir).map((g) => basename(g)),
    procs: (dir) => state.groups.get(dir) ?? null,
    remove(dir) {
      const refused = state.refuse.get(dir);
      if (refused) return refused;
      if ((state.groups.get(dir) ?? []).length > 0) return 'EBUSY';
      state.groups.delete(dir);
      return null;
    },
    kill(pid) {
      if (!state.commands.has(pid)) return false;
      state.killed.push(pid);
      state.commands.delete(pid);
      for (const [dir, pids] of state.groups)
        state.groups.set(
          dir,
          pids.filter((p) => p !== pid),
        );
      return true;
    },
    command: (pid) => state.commands.get(pid) ?? null,
  };
}

/** An empty fake state. */
export function emptyCgroupState(): FakeCgroupState {
  return { groups: new Map(), commands: new Map(), killed: [], refuse: new Map() };
}
