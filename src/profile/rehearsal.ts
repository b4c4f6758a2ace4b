// Rehearsals before a process's first job starts: the sampler's and the events reader's code compiled on a made-up
// process, so the job's first samples and events cost what later ones do.
import { rmSync } from 'node:fs';
import { EventWriter } from '../protocol/writer.js';
import { startSampler } from '../system/probes/samplers.js';
import { EventsReader } from './events-reader.js';

/** The rehearsals, once a process; one that fails costs nothing but its purpose. */
export function rehearse(device: string | null, eventsDir: string): void {
  if (rehearsed) return;
  rehearsed = true;
  try {
    compileSamplerCode(device);
    compileEventsCode(eventsDir);
  } catch {
    // The job's first samples and events then cost a little more, nothing else.
  }
}

/**
 * Samples the CLI's own process a few times (the first sample took 3.1 to 3.4 ms of CPU here, the fifteenth 0.5 to 0.6
 * ms: the first ten were a third of the profiler's CPU in a 3 s block). Nothing it reads is kept.
 */
function compileSamplerCode(device: string | null): void {
  const rehearsal = startSampler({ rootPid: null, device, intervalMs: null });
  rehearsal.setRoot(process.pid, { spawnedNow: true });
  for (let k = 0; k < SAMPLER_REHEARSALS; k++) rehearsal.tick();
  rehearsal.stop();
}

const SAMPLER_REHEARSALS = 3;

let rehearsed = false;

/** The same for the events reader: a made-up process's events written and read back in a folder removed after. */
function compileEventsCode(dir: string): void {
  try {
    const writer = EventWriter.open({
      dir,
      mode: 'synthetic',
      batchSize: 1,
      workers: 0,
      source: 'rehearsal',
      flushOnExit: false,
    });
    const reader = new EventsReader(dir);
    for (let i = 0; i < 3; i++) {
      writer.iter(i, 1, 1, 1);
      writer.flush();
      reader.poll();
    }
    writer.end('budget', 3);
    reader.finish();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
