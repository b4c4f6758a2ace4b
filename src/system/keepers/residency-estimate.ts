// How much of a dataset is resident, from a few files read with mincore: the files the cap holds and the others apart,
// each group read whole or by a uniform random sample scaled by bytes (a ratio estimator).

/** A mincore reading of the dataset's residency, taken through the keeper (its own opens make no evictions). */
export interface ResidencyReading {
  /** Dataset bytes resident: exact where every file was read, else estimated from the samples. */
  residentBytes: number;
  /** Bytes the cap believes it holds: the LRU plus the resident bytes of the files being read. */
  heldBytes: number;
  /** Files read with mincore for this reading. */
  measuredFiles: number;
  /** True when every file was read (no sampling). */
  exact: boolean;
}

/** What an estimate needs: the dataset as file indexes 0..files-1, and a way to measure one. */
export interface ResidencySample {
  /** Files in the dataset. */
  files: number;
  /** Bytes of the whole dataset. */
  datasetBytes: number;
  /** The files the cap holds, each once. */
  held: readonly number[];
  /** Files to measure at most in each group. */
  sampleFiles: number;
  /** Size of file `k` in bytes. */
  sizeOf(k: number): number;
  /** Resident bytes of file `k`, measured now (0 when it cannot be read). */
  residentOf(k: number): number;
  /** Uniform in [0, 1). */
  random(): number;
}

/** The dataset's resident bytes, the files measured, and whether every file was. */
export function estimateResidency(sample: ResidencySample): Omit<ResidencyReading, 'heldBytes'> {
  const { files, held, sampleFiles, random } = sample;
  const heldSet = new Set(held);
  let heldSizeBytes = 0;
  for (const k of held) heldSizeBytes += sample.sizeOf(k);
  const inHeld = estimateGroup(sample, (j) => held[j], held.length, heldSizeBytes);
  const others = files - held.length;
  // Others by rejection: held files are drawn again (a cap holds at most most of the dataset).
  const pickOther = (j: number): number => {
    if (others === files) return j;
    for (let tries = 0; tries < 64; tries++) {
      const k = Math.floor(random() * files);
      if (!heldSet.has(k)) return k;
    }
    for (let k = 0; k < files; k++) if (!heldSet.has(k)) return k;
    return 0;
  };
  const otherFiles = others <= sampleFiles ? allFilesExcept(files, heldSet) : null;
  const inOthers =
    others === 0
      ? { resident: 0, measured: 0, exact: true }
      : estimateGroup(
          sample,
          (j) => (otherFiles ? otherFiles[j] : pickOther(j)),
          others,
          Math.max(0, sample.datasetBytes - heldSizeBytes),
        );
  return {
    residentBytes: inHeld.resident + inOthers.resident,
    measuredFiles: inHeld.measured + inOthers.measured,
    exact: inHeld.exact && inOthers.exact,
  };
}

/** Resident bytes of a group of `count` files (`pick(j)` its j-th): all of them, or a random sample scaled by bytes. */
function estimateGroup(sample: ResidencySample, pick: (j: number) => number, count: number, groupBytes: number) {
  if (count <= sample.sampleFiles) {
    let resident = 0;
    for (let j = 0; j < count; j++) resident += sample.residentOf(pick(j));
    return { resident, measured: count, exact: true };
  }
  let resident = 0;
  let bytes = 0;
  for (let j = 0; j < sample.sampleFiles; j++) {
    const k = pick(Math.floor(sample.random() * count));
    resident += sample.residentOf(k);
    bytes += sample.sizeOf(k);
  }
  return { resident: bytes > 0 ? (resident / bytes) * groupBytes : 0, measured: sample.sampleFiles, exact: false };
}

/** Every file not in `held` (for a group small enough to read whole). */
function allFilesExcept(files: number, held: ReadonlySet<number>): number[] {
  const out: number[] = [];
  for (let k = 0; k < files; k++) if (!held.has(k)) out.push(k);
  return out;
}
