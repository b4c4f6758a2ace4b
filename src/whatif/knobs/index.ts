/**
 * Every what-if knob, in the order of whatif's --help. A new knob is a module beside this one (./knob.ts says what it
 * declares) and a line here.
 */
import type { Knob } from './knob.js';
import { CACHE_KNOB } from './cache.js';
import { CPUS_KNOB } from './cpus.js';
import { WORKERS_KNOB } from './workers.js';
import { STORAGE_BW_KNOB } from './storage-bw.js';
import { IN_FLIGHT_KNOB } from './in-flight.js';
import { LATENCY_KNOB } from './latency.js';
import { OBJECT_SIZE_KNOB } from './object-size.js';
import { GPUS_KNOB } from './gpus.js';
import { GPU_SPEEDUP_KNOB } from './gpu-speedup.js';
import { PREP_SPEEDUP_KNOB } from './prep-speedup.js';
import { CACHE_POLICY_KNOB } from './cache-policy.js';
import { NODES_KNOB } from './nodes.js';
import { PEER_BW_KNOB } from './peer-bw.js';
import { EPOCHS_KNOB } from './epochs.js';
import { JOBS_KNOB } from './jobs.js';
import { COORDINATED_KNOB } from './coordinated.js';

/** The knobs, in --help order. */
export const KNOBS: readonly Knob[] = [
  CACHE_KNOB,
  CPUS_KNOB,
  WORKERS_KNOB,
  STORAGE_BW_KNOB,
  IN_FLIGHT_KNOB,
  LATENCY_KNOB,
  OBJECT_SIZE_KNOB,
  GPUS_KNOB,
  GPU_SPEEDUP_KNOB,
  PREP_SPEEDUP_KNOB,
  CACHE_POLICY_KNOB,
  NODES_KNOB,
  PEER_BW_KNOB,
  EPOCHS_KNOB,
  JOBS_KNOB,
  COORDINATED_KNOB,
];
