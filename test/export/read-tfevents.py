"""An event-file reader written apart from src/export/tfrecord.ts, to check it.

Reads TFRecord framing (struct), checks both masked CRC-32Cs of every record
(its own bitwise CRC-32C, not a table), decodes the Event protobuf with its
own varint reader, checks that steps never go back within a file, and
compares every scalar with the figures it computes from the profile's JSON
itself. Prints one JSON line of what it checked;
exits 1 with the first mismatch on stderr.

usage: read-tfevents.py PROFILE LOGDIR
"""

import glob
import json
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(message):
    sys.stderr.write(message + "\n")
    sys.exit(1)


def records(path):
    with open(path, "rb") as f:
        blob = f.read()
    pos = 0
    while pos < len(blob):
        header = blob[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", blob[pos + 8 : pos + 12])
        if length_crc != masked(header):
            fail("%s: bad length CRC at byte %d" % (path, pos))
        data = blob[pos + 12 : pos + 12 + length]
        (data_crc,) = struct.unpack("<I", blob[pos + 12 + length : pos + 16 + length])
        if data_crc != masked(data):
            fail("%s: bad data CRC at byte %d" % (path, pos))
        yield data
        pos += 16 + length


def varint(data, pos):
    shift = value = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def fields(data):
    """(field number, wire type, value) of a message: varints as ints, fixed as bytes, length-delimited as bytes."""
    pos = 0
    out = []
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        elif wire == 2:
            length, pos = varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
        else:
            fail("unexpected wire type %d" % wire)
        out.append((number, wire, value))
    return out


def event(data):
    ev = {"scalars": []}
    for number, wire, value in fields(data):
        if number == 1 and wire == 1:
            ev["wall_time"] = struct.unpack("<d", value)[0]
        elif number == 2 and wire == 0:
            ev["step"] = value
        elif number == 3 and wire == 2:
            ev["file_version"] = value.decode()
        elif number == 5 and wire == 2:
            for n, w, v in fields(value):
                if n == 1 and w == 2:
                    tag = simple = None
                    for n2, w2, v2 in fields(v):
                        if n2 == 1 and w2 == 2:
                            tag = v2.decode()
                        elif n2 == 2 and w2 == 5:
                            simple = struct.unpack("<f", v2)[0]
                    ev["scalars"].append((tag, simple))
    return ev


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected(profile):
    """{run: {(tag, step): value}} computed from the profile's JSON."""
    runs = {}
    for mode in ("synthetic", "cached", "cold"):
        result = profile["modes"].get(mode)
        if not result:
            continue
        ranks = sorted(result["ranks"], key=lambda r: r["rank"])
        for rank in ranks:
            name = mode if len(ranks) == 1 else "%s-rank%d" % (mode, rank["rank"])
            want = runs.setdefault(name, {})
            for it in rank["iterations"]:
                ms = it["waitMs"] + it["computeMs"]
                want[("iteration/time_ms", it["i"])] = (ms, it["t"] / 1000)
                want[("iteration/data_wait_ms", it["i"])] = (it["waitMs"], it["t"] / 1000)
                if ms > 0:
                    want[("iteration/samples_per_sec", it["i"])] = (it["samples"] * 1000 / ms, it["t"] / 1000)
            if rank.get("summary"):
                s = rank["summary"]
                at = result["startedAt"] / 1000
                want[("summary/iteration_ms", 0)] = (s["iterMs"]["mean"], at)
                want[("summary/data_wait_ms", 0)] = (s["waitMs"]["mean"], at)
                want[("summary/samples_per_sec", 0)] = (s["samplesPerSec"], at)
    a = profile.get("analysis")
    if a:
        split = {}
        for tag, key in (
            ("split/compute_ms", "computeMs"),
            ("split/prep_stall_ms", "prepStallMs"),
            ("split/fetch_stall_ms", "fetchStallMs"),
            ("split/iteration_ms", "iterMs"),
        ):
            if a.get(key):
                split[(tag, 0)] = (a[key]["mean"], None)
        for tag, key in (
            ("split/prep_stall_fraction", "prepStallFraction"),
            ("split/fetch_stall_fraction", "fetchStallFraction"),
        ):
            if a.get(key) is not None:
                split[(tag, 0)] = (a[key], None)
        for tag, key in (
            ("split/checkpoint_stall_ms", "checkpointStall"),
            ("split/boundary_stall_ms", "boundaryStall"),
        ):
            if a.get(key):
                split[(tag, 0)] = (a[key]["ms"]["mean"], None)
        runs["split"] = split
    return runs


def main(profile_path, logdir):
    with open(profile_path) as f:
        profile = json.load(f)
    want = expected(profile)
    got_runs = sorted(os.listdir(logdir))
    if got_runs != sorted(want):
        fail(f"runs {got_runs}, expected {sorted(want)}")
    checked = 0
    for run, values in want.items():
        files = glob.glob(os.path.join(logdir, run, "events.out.tfevents.*"))
        if len(files) != 1:
            fail("%s: %d event files" % (run, len(files)))
        events = [event(r) for r in records(files[0])]
        if events[0].get("file_version") != "brain.Event:2":
            fail(f"{run}: first record is not the file version")
        seen = {}
        last_step = 0
        for ev in events[1:]:
            # TensorBoard may drop data it sees a step go back for (its out-of-order purge).
            if ev.get("step", 0) < last_step:
                fail("%s: step %d after step %d" % (run, ev.get("step", 0), last_step))
            last_step = ev.get("step", 0)
            if len(ev["scalars"]) != 1:
                fail("%s: an event with %d values" % (run, len(ev["scalars"])))
            tag, value = ev["scalars"][0]
            seen[(tag, ev.get("step", 0))] = (value, ev["wall_time"])
        if set(seen) != set(values):
            fail(f"{run}: tags and steps differ: {sorted(set(seen) ^ set(values))[:5]}")
        for k, (value, wall) in values.items():
            if seen[k][0] != f32(value):
                fail(f"{run} {k}: {seen[k][0]!r}, expected {f32(value)!r}")
            if wall is not None and abs(seen[k][1] - wall) > 1e-6:
                fail(f"{run} {k}: wall time {seen[k][1]!r}, expected {wall!r}")
            checked += 1
    print(json.dumps({"runs": len(want), "scalars": checked}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
