// A source bound to a run: its own network waits (remote data's download) end at its interrupt, their progress said.

/** How far a source's download (remote data's cached mode) has come. */
export interface DownloadProgress {
  /** The data as messages name it: no credentials, no query. */
  source: string;
  /** Objects and bytes to fetch. */
  objects: number;
  bytesTotal: number;
  /** Bytes fetched so far. */
  bytesDone: number;
  /** Seconds since the download started. */
  elapsedSec: number;
  /** Seconds the whole download should take at the rate measured before it; null where none was. */
  estimateSec: number | null;
  /** 'start' before the first request, 'running' while it runs, 'done' once every object is stored. */
  phase: 'start' | 'running' | 'done';
}

/** What a run tells its source about itself. */
export interface SourceRun {
  /** Aborted at the user's interrupt: the source's own network waits stop at once. */
  signal: AbortSignal;
  /** Told how a download of the source's comes on, about once a second. */
  onDownload?: (progress: DownloadProgress) => void;
  /** The data's rate over the network measured so far (the cold mode's), bytes/s, or null. */
  rateBytesPerSec?: () => number | null;
}

/** A source with network waits of its own; absent: none to tie to the run. */
export interface RunBinding {
  bindRun(run: SourceRun): void;
}
