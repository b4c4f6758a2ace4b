import { formatBytes, formatRate, percent } from '../units.js';
import type { ModelParameter, Prediction, Scenario } from '../whatif/model.js';
import type { WhatifResult } from '../whatif/whatif.js';
import { KNOBS } from '../whatif/knobs/index.js';
import type { PipelineWhatif } from '../schema/whatif-output.js';
import { formatPercent, oneLine, table, wrapLine } from './format.js';

/** What `whatif` prints: the asked scenario next to the profiled one, answers, sweeps, parameters, caveats. */
export function renderWhatif(r: WhatifResult): string {
  const pipelineAsked = r.pipeline ? pipelineChanges(r.pipeline) : [];
  const two = r.changed.length > 0 || pipelineAsked.length > 0;
  const out = [
    `what-if for ${oneLine(r.jobName)} (profile ${r.profilePath})`,
    ...wrapLine(
      'asked:',
      scenarioLine(r.prediction.scenario, r.changed, r.dataCache, r.pageCachePolicy, pipelineAsked),
      '  ',
    ),
    `basis: ${r.prediction.basis}; throughput is for all accelerators together`,
    '',
    ...answerLines(r, two),
  ];
  if (r.pipeline) out.push('', ...pipelineLines(r.pipeline, two));
  if (r.validateCommand) out.push('', `The profile did not run the asked setting; to measure it: ${r.validateCommand}`);
  if (r.jobs) out.push('', ...jobsLines(r.jobs));
  if (r.nodes) out.push('', ...nodesLines(r.nodes));
  out.push('', ...adviceLines(r), ...sweepLines(r), ...modelLines(r));
  if (r.caveats.length > 0) {
    out.push('', 'Caveats:');
    for (const c of r.caveats) out.push(...wrapLine('  -', c, '    '));
  }
  return out.join('\n') + '\n';
}

/** The answer as profiled (and as asked), with what its ranges rest on. */
function answerLines(r: WhatifResult, two: boolean): string[] {
  const p = r.prediction;
  const b = r.baseline;
  const rows: string[][] = [two ? ['', 'as profiled', 'asked'] : ['', 'as profiled']];
  const row = (label: string, f: (x: Prediction) => string): void => {
    rows.push(two ? [label, f(b), f(p)] : [label, f(b)]);
  };
  row('throughput, samples/s', (x) => withRange(x.samplesPerSec, x.range?.samplesPerSec, 1));
  // The steady model's pace; with the job's saves and epoch starts the pace is lower, and this says by how much.
  if (r.pipeline) {
    const withStalls = [r.pipeline.baseline, r.pipeline.prediction].map((x) => x.samplesPerSec.toFixed(1));
    rows.push(
      two ? ['  with saves and epoch starts', ...withStalls] : ['  with saves and epoch starts', withStalls[0]],
    );
  }
  row('epoch time', (x) => seconds(x.epochSec));
  row('  first epoch (cold)', (x) => seconds(x.firstEpochSec));
  row('  later epochs', (x) => seconds(x.steadyEpochSec));
  if (b.firstBatchSec !== undefined)
    row('first batch after the start (cold)', (x) => (x.firstBatchSec === undefined ? '—' : seconds(x.firstBatchSec)));
  row('per iteration, ms', (x) => withRange(x.iterMs, x.range?.iterMs, 2));
  row('  compute', (x) => x.computeMs.toFixed(2));
  row('  prep stall', (x) => x.prepStallMs.toFixed(2));
  row('  fetch stall', (x) => x.fetchStallMs.toFixed(2));
  row('accelerator utilisation', (x) => formatPercent(x.acceleratorUtilization));
  row('cache hit ratio', (x) => formatPercent(x.hitRatio));
  row('bottleneck', (x) => x.bottleneck);
  const out = [table(rows, two ? [1, 2] : [1])];
  const restsOn = [...new Set([...(b.range?.assumptions ?? []), ...(p.range?.assumptions ?? [])])];
  if (restsOn.length > 0) {
    out.push(
      '',
      'A range in brackets is how far the answer moves over what no measurement pinned (advice takes the slow end):',
    );
    for (const a of restsOn) out.push(...wrapLine('  - assumed:', a, '    '));
  }
  return out;
}

/** How to remove each stall, and the questions asked and not answered. */
function adviceLines(r: WhatifResult): string[] {
  const out = ['To remove each stall (steady state, other settings as asked):'];
  for (const rec of r.recommendations) out.push(...wrapLine('  -', rec.text, '    '));
  if (r.prepStage)
    out.push(
      ...wrapLine('  -', r.prepStage.lines[0]!, '    '),
      ...r.prepStage.lines.slice(1).flatMap((line) => wrapLine('   ', line, '    ')),
    );
  if (r.adviceAssumptions.length > 0)
    out.push(...wrapLine('  (each at the slow end of what it assumes:', `${r.adviceAssumptions.join('; ')})`, '   '));
  // Said where the answers are, not among the caveats: a question asked and not answered.
  for (const line of r.unanswered) out.push(...wrapLine('  -', line, '    '));
  return out;
}

/** The cache, CPU and loader-workers sweeps. */
function sweepLines(r: WhatifResult): string[] {
  const out: string[] = [];
  if (r.cacheSweep.length > 0)
    out.push(
      '',
      `Cache sweep (${policyOf(r.prediction.scenario, r.dataCache, r.pageCachePolicy)} vs MinIO; ` +
        `${r.prediction.basis}):`,
      cacheSweepTable(r),
    );
  const scaling =
    r.cpuScaling.kind === 'linear' ? 'linear scaling assumed (no CPU sweep)' : `fitted: ${r.cpuScaling.source}`;
  out.push('', `CPU sweep (${scaling}):`);
  out.push(
    sweepTable(['CPUs', 'accel util'], r.cpuSweep, (c) => [String(c.cpus), formatPercent(c.acceleratorUtilization)]),
  );
  if (r.workersSweep.length > 0) {
    out.push('', `Loader workers sweep (num_workers per rank, ${r.prediction.scenario.cpus} CPUs):`);
    out.push(sweepTable(['workers', 'CPUs needed'], r.workersSweep, (w) => [String(w.workers), String(w.cpusNeeded)]));
  }
  return out;
}

/** A sweep's table: its setting, the prep stall, iteration time and throughput, a column of its own, the bound. */
function sweepTable<T extends Pick<Prediction, 'prepStallMs' | 'iterMs' | 'samplesPerSec' | 'bottleneck'>>(
  [setting, own]: [string, string],
  rows: readonly T[],
  cells: (row: T) => [string, string],
): string {
  const body = rows.map((row) => {
    const [first, second] = cells(row);
    return [
      first,
      row.prepStallMs.toFixed(2),
      row.iterMs.toFixed(2),
      row.samplesPerSec.toFixed(1),
      second,
      row.bottleneck,
    ];
  });
  return table([[setting, 'prep stall ms', 'iter ms', 'samples/s', own, 'bound'], ...body], [0, 1, 2, 3, 4]);
}

/** The model's parameters and its check against the measured modes. */
function modelLines(r: WhatifResult): string[] {
  return [
    '',
    'Model parameters (~ marks a value from a mode that did not prove its cache state):',
    table(
      [
        ['', 'value', 'what', 'from'],
        ...r.parameters.map((q) => [q.symbol, formatParameter(q), q.name, q.source + (q.note ? ` [${q.note}]` : '')]),
      ],
      [1],
    ),
    '',
    'Model at the profiled settings vs measured (reproduced by construction, up to noise):',
    table(
      [
        ['mode', 'measured ms', 'model ms', 'error'],
        ...r.selfCheck.map((c) => [
          c.mode,
          c.measuredIterMs.toFixed(2),
          c.predictedIterMs.toFixed(2),
          `${(((c.predictedIterMs - c.measuredIterMs) / c.measuredIterMs) * 100).toFixed(1)}%`,
        ]),
      ],
      [1, 2, 3],
    ),
  ];
}

/** A value with its range in brackets, when the range is wider than 1% of it. */
function withRange(value: number, range: { low: number; high: number } | undefined, digits: number): string {
  const text = value.toFixed(digits);
  if (!range || range.high - range.low <= 0.01 * value) return text;
  return `${text} (${range.low.toFixed(digits)}–${range.high.toFixed(digits)})`;
}

function scenarioLine(
  s: Scenario,
  changed: (keyof Scenario)[],
  dataCache: WhatifResult['dataCache'],
  pageCache: WhatifResult['pageCachePolicy'],
  otherChanges: string[] = [],
): string {
  const mark = (key: keyof Scenario, text: string): string => (changed.includes(key) ? `${text}*` : text);
  return (
    [
      mark('cacheBytes', `cache ${formatBytes(s.cacheBytes)}`),
      mark('cachePolicy', policyOf(s, dataCache, pageCache)),
      mark('cpus', `${s.cpus} CPU${s.cpus === 1 ? '' : 's'}`),
      // 0: the profile did not measure the storage (no cold mode).
      mark(
        'storageBytesPerSec',
        `${dataCache === 'object-cache' ? 'network' : 'storage'} ${s.storageBytesPerSec > 0 ? formatRate(s.storageBytesPerSec) : 'not measured'}`,
      ),
      mark('gpus', `${s.gpus} accelerator${s.gpus === 1 ? '' : 's'}`),
      mark('gpuSpeedup', `speed-up ${s.gpuSpeedup}x`),
      ...((s.jobs ?? 1) > 1 ? [mark('jobs', `${s.jobs} jobs${s.coordinated ? ', coordinated' : ''}`)] : []),
      ...((s.nodes ?? 1) > 1
        ? [
            mark(
              'nodes',
              `${s.nodes} nodes${s.partitioned ? `, cache partitioned (peers at ${formatRate(s.peerBytesPerSec ?? 0)})` : ''}`,
            ),
          ]
        : []),
      // The knobs that say themselves where they are not as profiled (whatif/knobs/).
      ...KNOBS.flatMap((knob) => {
        const words = knob.asked?.(s);
        return words ? [mark(knob.field, words)] : [];
      }),
      // Settings outside the scenario (checkpoints, the loader's epochs), each changed.
      ...otherChanges.map((text) => `${text}*`),
    ].join(', ') + (changed.length > 0 || otherChanges.length > 0 ? '  (* changed)' : '  (as profiled)')
  );
}

/** K jobs on one dataset: independent against coordinated, every job's ranks together. */
function jobsLines(jobs: NonNullable<WhatifResult['jobs']>): string[] {
  const line = (name: string, p: Prediction): string =>
    `  ${name}: ${withRange(p.samplesPerSec, p.range?.samplesPerSec, 1)} samples/s for ` +
    `all ${jobs.count} jobs, ${p.iterMs.toFixed(1)} ms per iteration, ${p.bottleneck}-bound`;
  return [
    `${jobs.count} jobs reading this dataset at once:`,
    line('each fetching and preparing its own samples', jobs.independent),
    line('sharing one fetch and prep of each sample (CoorDL)', jobs.coordinated),
    `  coordinated prep gives ${jobs.speedup.toFixed(2)}x the throughput`,
  ];
}

/** N nodes: their caches partitioned against each caching alone, every node's ranks together. */
function nodesLines(nodes: NonNullable<WhatifResult['nodes']>): string[] {
  const line = (name: string, p: Prediction): string =>
    `  ${name}: ${withRange(p.samplesPerSec, p.range?.samplesPerSec, 1)} samples/s for all ${nodes.count} nodes, ` +
    `hit ratio ${formatPercent(p.hitRatio)}, ${p.bottleneck}-bound`;
  return [
    `${nodes.count} nodes of this job:`,
    line("each node's page cache holding what it read", nodes.independent),
    line("the dataset spread over the nodes' caches, a miss fetched from its peer (CoorDL)", nodes.partitioned),
    `  the partitioned cache gives ${nodes.speedup.toFixed(2)}x the throughput`,
  ];
}

function policyOf(
  s: Scenario,
  dataCache: WhatifResult['dataCache'],
  pageCache?: WhatifResult['pageCachePolicy'],
): string {
  if (dataCache === 'object-cache')
    return s.cachePolicy === 'minio' ? 'local object cache, no eviction' : 'local object cache (LRU)';
  if (s.cachePolicy === 'minio') return 'MinIO cache';
  return pageCache?.model === 'exact-lru' ? 'page cache (LRU)' : "page cache (Linux's two lists)";
}

function seconds(sec: number): string {
  if (!Number.isFinite(sec)) return '—';
  if (sec >= 3600) return `${(sec / 3600).toFixed(2)} h`;
  if (sec >= 60) return `${(sec / 60).toFixed(1)} min`;
  return `${sec.toFixed(2)} s`;
}

function formatParameter(q: ModelParameter): string {
  const mark = q.proven ? '' : '~';
  const value =
    q.unit === 'bytes'
      ? formatBytes(q.value)
      : q.unit === 'bytes/s'
        ? formatRate(q.value)
        : `${Number.isInteger(q.value) ? q.value : q.value.toPrecision(4)} ${q.unit}`;
  return mark + value;
}

/** The cache sweep's rows as a table. */
function cacheSweepTable(r: WhatifResult): string {
  return table(
    [
      [
        'cache',
        'of dataset',
        'page-cache hit',
        '(exact LRU)',
        'MinIO hit',
        'page-cache samples/s',
        'MinIO samples/s',
        'page-cache bound',
        'MinIO bound',
      ],
      ...r.cacheSweep.map((c) => [
        formatBytes(c.cacheBytes),
        formatPercent(c.cacheFraction),
        formatPercent(c.pageCacheHitRatio),
        formatPercent(c.lruHitRatio),
        formatPercent(c.minioHitRatio),
        c.pageCacheSamplesPerSec.toFixed(1),
        c.minioSamplesPerSec.toFixed(1),
        c.pageCacheBottleneck,
        c.minioBottleneck,
      ]),
    ],
    [0, 1, 2, 3, 4, 5, 6],
  );
}

/** The checkpoint and loader settings asked that differ from the profile's, for the 'asked:' line. */
function pipelineChanges(p: PipelineWhatif): string[] {
  const c = p.checkpoint;
  const b = p.boundary;
  return [
    c && c.asked.everyIterations !== c.profiled.everyIterations
      ? `saves every ${c.asked.everyIterations} iterations`
      : null,
    c && c.asked.saveMode !== c.profiled.saveMode ? `${c.asked.saveMode} saves` : null,
    c && c.asked.writeBytesPerSec !== null ? `saves written at ${formatRate(c.asked.writeBytesPerSec)}` : null,
    b && b.asked.persistentWorkers !== b.profiled.persistentWorkers
      ? `persistent_workers=${b.asked.persistentWorkers ? 'True' : 'False'}`
      : null,
    b && b.asked.prefetchFactor !== b.profiled.prefetchFactor ? `prefetch_factor=${b.asked.prefetchFactor}` : null,
  ].filter((x): x is string => x !== null);
}

/** Checkpoints and epoch boundaries: the stalls as profiled and as asked, the pace with them, CheckFreq's interval. */
function pipelineLines(p: PipelineWhatif, two: boolean): string[] {
  const rows: string[][] = [['with checkpoints and epoch boundaries', 'as profiled', 'asked']];
  const c = p.checkpoint;
  const b = p.boundary;
  if (c) {
    rows.push(['  saves every, iterations', c.profiled.everyIterations.toFixed(0), c.asked.everyIterations.toFixed(0)]);
    const mode = (m: 'sync' | 'async') => (m === 'async' ? 'async' : 'blocking');
    rows.push([
      '  one save blocks, ms',
      `${c.profiled.perSaveMs.toFixed(1)} (${mode(c.profiled.saveMode)})`,
      `${c.asked.perSaveMs.toFixed(1)} (${mode(c.asked.saveMode)})`,
    ]);
    rows.push(['  checkpoint stall, ms/iter', c.profiled.stallMsPerIter.toFixed(2), c.asked.stallMsPerIter.toFixed(2)]);
  }
  if (b) {
    rows.push(['  epoch start, ms', b.profiled.perEpochMs.toFixed(0), b.asked.perEpochMs.toFixed(0)]);
    rows.push(['  boundary stall, ms/iter', b.profiled.stallMsPerIter.toFixed(2), b.asked.stallMsPerIter.toFixed(2)]);
  }
  rows.push(['  per iteration, ms', p.baseline.iterMs.toFixed(2), p.prediction.iterMs.toFixed(2)]);
  rows.push(['  throughput, samples/s', p.baseline.samplesPerSec.toFixed(1), p.prediction.samplesPerSec.toFixed(1)]);
  const out = [table(two ? rows : rows.map((r) => r.slice(0, 2)), [1, 2])];
  if (c) {
    out.push(
      c.everyForBudget === null
        ? `  checkpointing stays above ${percent(c.budget)} of the training time at any interval`
        : `  to keep checkpointing under ${percent(c.budget)} of the training time: save ` +
            `every ${c.everyForBudget} iterations or more (CheckFreq); ` +
            `at the asked interval it takes ${percent(c.asked.overhead)}`,
    );
    out.push(
      `  a failure loses ${seconds(c.lostWorkPerFailureSec)} of work on average at the asked interval (half an ` +
        `interval)`,
    );
    if (c.failures)
      out.push(
        `  at ${c.failures.perDay} failures a day: ${seconds(c.failures.lostShare * 86_400)} of work redone a ` +
          `day, ${percent(c.failures.totalShare, 2)} of the time with the saves; ` +
          `the least is near every ${c.failures.bestEveryIterations} iterations (Young: sqrt(2 x save x time ` +
          `between failures))`,
      );
    for (const a of c.assumptions) out.push(...wrapLine('  - assumed:', a, '    '));
  }
  if (b) {
    if (b.line) out.push(`  paste: ${b.line}`);
    for (const a of b.assumptions) out.push(...wrapLine('  - assumed:', a, '    '));
  }
  return out;
}
