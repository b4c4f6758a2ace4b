"""Cached mode on a resident subset: restrict a dataset to the files in DSA_SUBSET_FILE.

When the dataset does not fit in the memory the job has, the CLI warms a seeded
random subset of its files, proves it resident, and names it in DSA_SUBSET_FILE
(absolute paths, one a line; docs/protocol.md). The job must then sample only
from those files. With no change to the script, the DataLoader hook calls
restrict() on each loader's dataset before its iterator (and its workers) is
created, so samplers see the shorter dataset from the first epoch. It knows:

- torchvision DatasetFolder/ImageFolder: `samples` (and `imgs`, `targets`);
- a dataset that keeps its files in a list attribute as long as the dataset
  (paths, or tuples whose first element is a path), filtering every list of
  that length the same way (labels beside paths);
- torch.utils.data.Subset of either, by filtering its indices.

A dataset none of this fits is left alone and the reason is reported in the
start event (subsetNote); the CLI then calls the cached mode unproven.
"""

import os

_state = {"paths": None, "loaded": False, "results": {}}


def subset_paths(env=None):
    """The absolute paths of DSA_SUBSET_FILE as a frozenset, or None when no subset is asked for."""
    env = os.environ if env is None else env
    if env is os.environ and _state["loaded"]:
        return _state["paths"]
    name = env.get("DSA_SUBSET_FILE", "")
    paths = None
    if name and env.get("DSA_MODE") == "cached":
        try:
            with open(name, encoding="utf-8") as f:
                paths = frozenset(line.rstrip("\n") for line in f if line.strip())
        except OSError as error:
            paths = frozenset()
            _state["read_error"] = f"cannot read {name}: {error.strerror or error}"
    if env is os.environ:
        _state["paths"] = paths
        _state["loaded"] = True
    return paths


def _as_path(item):
    """The path in a list element (a path, or a tuple/list whose first element is one), else None."""
    if isinstance(item, (tuple, list)) and item:
        item = item[0]
    if isinstance(item, str):
        return item
    if hasattr(item, "__fspath__"):
        try:
            path = os.fspath(item)
        except TypeError:
            return None
        return path if isinstance(path, str) else None
    return None


def _aligned_lists(dataset, n):
    """Attributes of the dataset holding a list (or tuple) of exactly n elements."""
    found = []
    for name, value in list(vars(dataset).items()):
        if isinstance(value, (list, tuple)) and len(value) == n and n > 0:
            found.append(name)
    return found


def _keep_mask(values, paths):
    """Per element, whether its path is in the subset; None when the elements are not paths."""
    mask = []
    for value in values:
        path = _as_path(value)
        if path is None:
            return None
        mask.append(os.path.abspath(path) in paths)
    return mask


def _filter_attr(dataset, name, mask):
    value = getattr(dataset, name)
    kept = [v for v, keep in zip(value, mask) if keep]
    setattr(dataset, name, tuple(kept) if isinstance(value, tuple) else kept)


def _restrict_listing(dataset, paths):
    """Restricts a dataset that lists its files; returns (kept, note) or (None, note)."""
    kind = type(dataset).__name__
    try:
        n = len(dataset)
    except TypeError:
        return None, f"{kind} has no length (an IterableDataset cannot be restricted by index)"
    names = _aligned_lists(dataset, n)
    path_lists = []
    for name in names:
        if any(getattr(dataset, name) is getattr(dataset, other) for other, _ in path_lists):
            continue  # torchvision's imgs is samples
        mask = _keep_mask(getattr(dataset, name), paths)
        if mask is not None:
            path_lists.append((name, mask))
    if not path_lists:
        return None, "%s exposes no list of its %d file paths" % (kind, n)
    # `samples` first (torchvision), then the list with the most paths in the subset.
    path_lists.sort(key=lambda entry: (entry[0] != "samples", -sum(entry[1])))
    name, mask = path_lists[0]
    kept = sum(mask)
    if kept == 0:
        return None, "none of the %d files of %s.%s is in the subset (not the dataset under --data)" % (n, kind, name)
    saved = {attr: getattr(dataset, attr) for attr in names}
    for attr in names:
        _filter_attr(dataset, attr, mask)
    # torchvision keeps `imgs` as the same list as `samples`; `targets` beside them.
    if getattr(dataset, "samples", None) is not None and name == "samples":
        if "imgs" in saved or hasattr(dataset, "imgs"):
            dataset.imgs = dataset.samples
        if hasattr(dataset, "targets") and "targets" not in names:
            saved["targets"] = dataset.targets
            dataset.targets = [s[1] for s in dataset.samples]
    try:
        length = len(dataset)
    except Exception:  # noqa: BLE001 - a dataset's own __len__ may fail on the change
        length = None
    if length != kept:
        for attr, value in saved.items():
            setattr(dataset, attr, value)
        return None, "%s.%s was filtered to %d files but len() then said %s; left whole" % (kind, name, kept, length)
    return kept, "%s.%s: kept %d of %d files" % (kind, name, kept, n)


def _restrict_torch_subset(dataset, paths):
    inner = dataset.dataset
    kind = type(inner).__name__
    for name in ("samples", "imgs"):
        listing = getattr(inner, name, None)
        if isinstance(listing, (list, tuple)) and listing:
            break
    else:
        listing = None
        try:
            n = len(inner)
        except TypeError:
            n = 0
        for name in _aligned_lists(inner, n):
            if _keep_mask(getattr(inner, name)[:1], paths) is not None:
                listing = getattr(inner, name)
                break
    if listing is None:
        return None, f"Subset of {kind}, which exposes no list of file paths"
    indices = list(dataset.indices)
    kept = []
    for i in indices:
        path = _as_path(listing[i])
        if path is not None and os.path.abspath(path) in paths:
            kept.append(i)
    if not kept:
        return None, "none of the %d files of Subset(%s) is in the subset" % (len(indices), kind)
    dataset.indices = kept
    return len(kept), "Subset(%s).indices: kept %d of %d files" % (kind, len(kept), len(indices))


def restrict(dataset, paths):
    """Restricts `dataset` in place to samples whose file is in `paths` (absolute).

    Returns (kept, note): kept is the number of samples left, or None when the
    dataset was left whole (note says why). Idempotent: a dataset is handled once.
    """
    key = id(dataset)
    if key in _state["results"] and _state["results"][key][0] is dataset:
        return _state["results"][key][1]
    if "read_error" in _state:
        result = (None, _state["read_error"])
    elif type(dataset).__name__ == "Subset" and hasattr(dataset, "indices") and hasattr(dataset, "dataset"):
        result = _restrict_torch_subset(dataset, paths)
    else:
        result = _restrict_listing(dataset, paths)
    _state["results"][key] = (dataset, result)
    return result


def result_for(dataset):
    """(kept, note) of an earlier restrict() of this dataset, or None."""
    entry = _state["results"].get(id(dataset))
    return entry[1] if entry is not None and entry[0] is dataset else None


def fix_sampler(loader):
    """A DistributedSampler fixes its sample count at construction: recompute it for the shorter dataset."""
    sampler = getattr(loader, "sampler", None)
    if sampler is None or not hasattr(sampler, "num_replicas") or not hasattr(sampler, "total_size"):
        return
    import math

    n = len(sampler.dataset)
    if getattr(sampler, "drop_last", False) and n % sampler.num_replicas != 0:
        sampler.num_samples = math.ceil((n - sampler.num_replicas) / sampler.num_replicas)
    else:
        sampler.num_samples = math.ceil(n / sampler.num_replicas)
    sampler.total_size = sampler.num_samples * sampler.num_replicas


def reset_for_tests():
    _state["paths"] = None
    _state["loaded"] = False
    _state["results"] = {}
    _state.pop("read_error", None)
