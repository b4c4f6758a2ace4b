/**
 * Settings of the emulated job used by `demo`, the known-cost test and the accuracy benchmark: every stage significant,
 * so all three parts of the split show and can be checked against what the settings imply.
 */
export const EMULATOR_PRESETS = {
  /** The demo: 256 MiB of 1 MiB files, about 2 minutes. */
  full: {
    files: 256,
    fileBytes: 1 << 20,
    batchSize: 8,
    workers: 2,
    computeMs: 20,
    prepMs: 8,
    storageBwBytesPerSec: 80e6,
  },
  /** Smaller and faster: 16 MiB of 256 KiB files, about a minute. */
  quick: {
    files: 64,
    fileBytes: 256 << 10,
    batchSize: 4,
    workers: 2,
    computeMs: 10,
    prepMs: 15,
    storageBwBytesPerSec: 12.5e6,
  },
} as const;

export type EmulatorPreset = (typeof EMULATOR_PRESETS)[keyof typeof EMULATOR_PRESETS];
