"""Reading a profile in Python: ``ds_analyzer.load(path)`` (docs/export.md).

This module is not imported by the job-side instrumentation: ``ds_analyzer``
imports it only when ``load`` is called, so the hook that sitecustomize loads
into a training job stays as small as it was. It needs the standard library
only; pandas, when importable, gives ``iterations`` as a DataFrame.

The rows are those of ``ds-analyzer export --format csv``, built the same way
from the profile's JSON (src/export/iteration-rows.ts holds the TypeScript
twin; test/export/python-load.test.ts holds the two to each other).
"""

import json

PROFILE_SCHEMA_VERSION = 1

#: The columns of ``Profile.iterations``, in order: the CSV's header.
ITERATION_COLUMNS = (
    "mode",
    "variant",
    "run",
    "rank",
    "node",
    "node_rank",
    "iteration",
    "epoch",
    "start_s",
    "end_s",
    "duration_s",
    "wait_s",
    "compute_s",
    "samples",
    "bytes",
    "warmup",
    "epoch_start",
    "checkpoint_saves",
    "checkpoint_s",
    "checkpoint_before_saves",
    "checkpoint_before_s",
)

MODE_ORDER = ("synthetic", "cached", "cold")
#: The variant of a mode as the profile ran it (sweep points are 'cpus=N', 'workers=N', 'overlap=S').
DEFAULT_VARIANT = "default"


class Profile:
    """A profile file, read.

    ``modes``: each mode's result as the JSON holds it (docs/json-output.md),
    by mode name, in run order synthetic, cached, cold.
    ``split``: the differential split (the JSON's ``analysis``), or None.
    ``iterations``: one row per iteration of every mode, rank and run: a
    pandas DataFrame when pandas is importable, else a list of dicts.
    ``raw``: the whole JSON.
    """

    def __init__(self, path, raw):
        self.path = path
        self.raw = raw
        self.job_name = raw.get("jobName")
        self.created_at = raw.get("createdAt")
        self.status = raw.get("status")
        modes = raw.get("modes") or {}
        self.modes = dict((mode, modes[mode]) for mode in MODE_ORDER if modes.get(mode) is not None)
        self.split = raw.get("analysis")
        self._rows = iteration_rows(raw)
        self.iterations = _frame(self._rows)

    def iteration_rows(self):
        """The rows as a list of dicts, with or without pandas."""
        return [dict(row) for row in self._rows]

    def __repr__(self):
        return "<ds_analyzer.Profile %r: %s, %d iterations>" % (
            self.job_name,
            ", ".join(self.modes) or "no modes",
            len(self._rows),
        )


def load(path):
    """Reads the profile at ``path`` (a file ``ds-analyzer profile`` wrote)."""
    with open(path, encoding="utf-8") as f:
        try:
            raw = json.load(f)
        except ValueError as error:
            raise ValueError(f"{path} is not a profile: not JSON ({error})") from error
    if not isinstance(raw, dict) or raw.get("schemaVersion") != PROFILE_SCHEMA_VERSION:
        version = raw.get("schemaVersion") if isinstance(raw, dict) else None
        raise ValueError(
            "%s is not a profile of schemaVersion %d (it has %r): use the ds_analyzer of the ds-analyzer that wrote it"
            % (path, PROFILE_SCHEMA_VERSION, version)
        )
    return Profile(path, raw)


def _frame(rows):
    try:
        import pandas
    except ImportError:
        return rows
    frame = pandas.DataFrame(rows, columns=list(ITERATION_COLUMNS))
    # As pandas.read_csv reads the CSV: an unknown epoch or byte count is NaN in a float column.
    for column in ("epoch", "bytes"):
        frame[column] = pandas.to_numeric(frame[column]).astype("float64")
    return frame


def _js_number(value):
    """A number as JavaScript's String() writes it in a variant name (1.0 -> '1')."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def mode_series(raw):
    """(mode, variant, result) of every series of iterations: the modes, then the sweeps and the overlap probe."""
    modes = raw.get("modes") or {}
    series = [(mode, DEFAULT_VARIANT, modes[mode]) for mode in MODE_ORDER if modes.get(mode) is not None]
    for result in raw.get("cpuSweep") or []:
        cpus = result.get("cpus")
        series.append((result["mode"], "cpus=%s" % (len(cpus) if cpus is not None else "all"), result))
    for result in raw.get("workersSweep") or []:
        asked = result.get("workersAsked")
        series.append((result["mode"], "workers=%s" % (_js_number(asked) if asked is not None else "script"), result))
    probe = raw.get("overlapProbe")
    if probe is not None:
        series.append((probe["mode"], "overlap={}".format(_js_number(probe["residentShare"])), probe))
    return series


def iteration_rows(raw):
    """Every iteration of the profile's JSON, one dict each (ITERATION_COLUMNS)."""
    host = (raw.get("host") or {}).get("hostname", "")
    rows = []
    for mode, variant, result in mode_series(raw):
        run_starts = [p["startedAt"] for p in result.get("passes") or []]
        for rank in sorted(result.get("ranks") or [], key=lambda r: r["rank"]):
            rows.extend(_rank_rows(mode, variant, run_starts, rank, host))
    return rows


def _rank_rows(mode, variant, run_starts, rank, host):
    node = rank.get("node") or {}
    epochs = sorted(rank.get("epochs") or [], key=lambda e: e["i"])
    epoch_starts = set(e["i"] for e in epochs)
    in_step, before = {}, {}
    # A save's i is the iterations its process had recorded when it began: in
    # a step, the iteration whose step it ran in; between epochs, the next one.
    for save in rank.get("checkpoints") or []:
        (in_step if save["inStep"] else before).setdefault(save["i"], []).append(save)
    iterations = sorted(rank.get("iterations") or [], key=lambda it: it["i"])
    # Warm-up: the iterations' flags; in profiles written before the flag, the first summary.warmupIterations.
    flagged = any(it.get("warmup") is True for it in iterations)
    first_warmup = (rank.get("summary") or {}).get("warmupIterations", 0)
    rows = []
    for index, it in enumerate(iterations):
        i, t, wait, compute = it["i"], it["t"], it["waitMs"], it["computeMs"]
        run = 1
        for index, started in enumerate(run_starts):
            if started <= t:
                run = index + 1
        epoch = None
        for e in epochs:
            if e["i"] <= i:
                epoch = e["epoch"]
        saves, saves_before = in_step.get(i, []), before.get(i, [])
        rows.append(
            {
                "mode": mode,
                "variant": variant,
                "run": run,
                "rank": rank["rank"],
                "node": node.get("hostname", host),
                "node_rank": node.get("nodeRank", 0),
                "iteration": i,
                "epoch": epoch,
                # Both writers record an iteration when its step ends: t is its end.
                "start_s": (t - wait - compute) / 1000,
                "end_s": t / 1000,
                "duration_s": (wait + compute) / 1000,
                "wait_s": wait / 1000,
                "compute_s": compute / 1000,
                "samples": it["samples"],
                "bytes": it.get("bytes"),
                "warmup": it.get("warmup") is True if flagged else index < first_warmup,
                "epoch_start": i in epoch_starts,
                "checkpoint_saves": len(saves),
                "checkpoint_s": _blocking_sec(saves),
                "checkpoint_before_saves": len(saves_before),
                "checkpoint_before_s": _blocking_sec(saves_before),
            }
        )
    return rows


def _blocking_sec(saves):
    total = 0
    for save in saves:
        total += save["blockingMs"]
    return total / 1000
