"""Training unharmed (profile --continue): what a synthetic block does to the job is undone at its end.

A synthetic block trains the model on one replayed batch. Under --continue the job is the real training run, so
at the block's start the hook takes a copy of everything that training changes, and puts it back in place at the
block's end: the parameters (and their gradients) and buffers of every model an optimizer trains, the optimizers'
state and hyper-parameters, the learning-rate schedulers, the AMP grad scalers, and the random generators (Python,
NumPy, torch on the CPU and on every CUDA device). See docs/pytorch.md, "Training unharmed".

The objects are found by walking the garbage collector's objects once per block (no patch of torch's classes, so
an optimizer built before the hook was imported is seen too). The copies live in host memory: a state larger than
DSA_SNAPSHOT_SHARE (default 0.5) of the memory available (divided among the ranks of this machine) is not held,
and the block is run on real data instead (CannotHold).
"""

import copy
import gc
import os
import random
import sys
import time
import warnings

# Share of MemAvailable the copies of one process may take, divided among the ranks of this machine.
DEFAULT_SHARE = 0.5


class CannotHold(Exception):
    """The job's state cannot be copied and put back: the synthetic block must not train on replayed batches."""


def _torch():
    return sys.modules.get("torch")


def _classes(torch):
    """The classes whose instances hold training state, by kind (missing ones left out)."""
    sched_mod = torch.optim.lr_scheduler
    schedulers = tuple(
        c
        for c in (
            getattr(sched_mod, "LRScheduler", None),
            getattr(sched_mod, "_LRScheduler", None),
            getattr(sched_mod, "ReduceLROnPlateau", None),
        )
        if c is not None
    )
    scalers = []
    for owner in (getattr(torch, "amp", None), getattr(torch.cuda, "amp", None), getattr(torch, "cpu", None)):
        amp = getattr(owner, "amp", owner) if owner is not None else None
        cls = getattr(amp, "GradScaler", None) if amp is not None else None
        if isinstance(cls, type):
            scalers.append(cls)
    return torch.optim.Optimizer, schedulers, tuple(scalers), torch.nn.Module


def _unsupported(obj):
    """Why an object's state cannot be held by this module (sharded or offloaded state), or None."""
    name = type(obj).__name__
    module = type(obj).__module__ or ""
    if name in ("FullyShardedDataParallel", "ZeroRedundancyOptimizer") or module.startswith("deepspeed"):
        return f"{module}.{name} shards or offloads its state"
    return None


def find(torch=None):
    """(optimizers, schedulers, scalers, modules) alive now: modules are those whose parameters an optimizer trains,
    with their ancestors (a model's buffers may sit in a submodule without parameters)."""
    torch = torch or _torch()
    opt_cls, sched_cls, scaler_cls, module_cls = _classes(torch)
    optimizers, schedulers, scalers, modules = [], [], [], []
    with warnings.catch_warnings():
        # isinstance() on some of torch's deprecated proxies (torch.distributed.reduce_op) warns.
        warnings.simplefilter("ignore")
        objects = [obj for obj in gc.get_objects() if isinstance(obj, (opt_cls, module_cls) + sched_cls + scaler_cls)]
    for obj in objects:
        if isinstance(obj, opt_cls):
            optimizers.append(obj)
        elif sched_cls and isinstance(obj, sched_cls):
            schedulers.append(obj)
        elif scaler_cls and isinstance(obj, scaler_cls):
            scalers.append(obj)
        elif isinstance(obj, module_cls):
            modules.append(obj)
    for obj in optimizers + modules:
        why = _unsupported(obj)
        if why is not None:
            raise CannotHold(why)
    trained = {id(p) for opt in optimizers for group in opt.param_groups for p in group["params"]}
    return optimizers, schedulers, scalers, _trained_roots(modules, trained)


def _trained_roots(modules, trained):
    """The outermost modules that own (directly or below them) a parameter an optimizer trains."""
    parent = {}
    for m in modules:
        for child in m._modules.values():
            if child is not None:
                parent.setdefault(id(child), m)
    roots = {}
    for m in modules:
        if any(p is not None and id(p) in trained for p in m._parameters.values()):
            top = m
            while id(top) in parent:
                top = parent[id(top)]
            roots[id(top)] = top
    return list(roots.values())


def _nbytes(t):
    return t.numel() * t.element_size()


def _host_copy(t):
    return t.detach().to("cpu", copy=True)


def _available_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def allowance_bytes(env=None):
    """Bytes this process's copies may take: the share of available memory, split among this machine's ranks."""
    env = os.environ if env is None else env
    try:
        share = float(env.get("DSA_SNAPSHOT_SHARE", DEFAULT_SHARE))
    except ValueError:
        share = DEFAULT_SHARE
    try:
        local = max(1, int(env.get("LOCAL_WORLD_SIZE", "1")))
    except ValueError:
        local = 1
    available = _available_bytes()
    return None if available is None else int(available * share / local)


class Snapshot:
    """A copy of the job's training state, put back in place by restore()."""

    def __init__(self, torch=None, allowance=None):
        torch = torch or _torch()
        if torch is None:
            raise CannotHold("torch is not imported")
        began = time.perf_counter()
        optimizers, schedulers, scalers, roots = find(torch)
        if not optimizers:
            raise CannotHold("no torch.optim.Optimizer was found: the model's training state cannot be seen")
        self.torch = torch
        params = _unique(p for opt in optimizers for g in opt.param_groups for p in g["params"])
        buffers = _owned_buffers(roots)
        self.bytes = sum(_nbytes(t) for t in params) + sum(_nbytes(b) for _, _, b in buffers)
        self.bytes += sum(_nbytes(p.grad) for p in params if p.grad is not None)
        self.bytes += sum(
            _nbytes(v) for opt in optimizers for s in opt.state.values() for v in s.values() if torch.is_tensor(v)
        )
        limit = allowance_bytes() if allowance is None else allowance
        if limit is not None and self.bytes > limit:
            raise CannotHold(
                f"the training state is {self.bytes / 2.0**20:.1f} MiB, over the {limit / 2.0**20:.1f} MiB "
                "its copy may take (DSA_SNAPSHOT_SHARE)"
            )
        with torch.no_grad():
            self.params = [(p, _host_copy(p), None if p.grad is None else _host_copy(p.grad)) for p in params]
            self.buffers = [(owner, name, b, _host_copy(b)) for owner, name, b in buffers]
        self.optimizers = [(opt, _optimizer_copy(torch, opt)) for opt in optimizers]
        # Schedulers and scalers by their whole __dict__; the optimizers, models and other schedulers they point at
        # are shared, not copied (a SequentialLR holds its schedulers, each of which holds the optimizer).
        keep = {id(o): o for o in optimizers + schedulers + roots + params}
        self.objects = [(obj, _dict_copy(obj, keep)) for obj in schedulers + scalers]
        self.rng = _rng_state(torch)
        self.take_s = time.perf_counter() - began

    def restore(self):
        """Puts every value back in place (the same tensor objects: the model and optimizers see their own)."""
        began = time.perf_counter()
        torch = self.torch
        with torch.no_grad():
            for p, data, grad in self.params:
                p.data.copy_(data)
                if grad is None:
                    p.grad = None
                elif p.grad is None or p.grad.shape != grad.shape:
                    p.grad = grad.to(p.device)
                else:
                    p.grad.copy_(grad)
            for owner, name, b, data in self.buffers:
                b.copy_(data)
                # A buffer the block replaced by assignment (not in place) gets its own tensor back.
                if owner._buffers.get(name) is not b:
                    owner._buffers[name] = b
        for opt, saved in self.optimizers:
            _optimizer_restore(torch, opt, saved)
        for obj, saved in self.objects:
            obj.__dict__.clear()
            obj.__dict__.update(saved)
        _set_rng_state(torch, self.rng)
        return time.perf_counter() - began


def _unique(tensors):
    seen, out = set(), []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _owned_buffers(roots):
    """(module, name, tensor) of every buffer under the roots, each tensor once."""
    seen, out = set(), []
    for root in roots:
        for m in root.modules():
            for name, b in m._buffers.items():
                if b is not None and id(b) not in seen:
                    seen.add(id(b))
                    out.append((m, name, b))
    return out


def _optimizer_copy(torch, opt):
    state = {}
    for p, s in opt.state.items():
        state[p] = {
            k: (v.device, _host_copy(v)) if torch.is_tensor(v) else ("value", copy.deepcopy(v)) for k, v in s.items()
        }
    groups = [{k: copy.deepcopy(v) for k, v in g.items() if k != "params"} for g in opt.param_groups]
    # The scheduler's wrapper counts steps on the optimizer (torch warns when a scheduler steps first).
    extra = {k: getattr(opt, k) for k in ("_step_count",) if hasattr(opt, k)}
    return state, groups, extra


def _optimizer_restore(torch, opt, saved):
    state, groups, extra = saved
    for p in list(opt.state.keys()):
        if p not in state:
            del opt.state[p]  # state first made inside the block (a lazily built Adam moment)
    for p, s in state.items():
        now = opt.state[p]
        for k in list(now.keys()):
            if k not in s:
                del now[k]
        for k, (where, v) in s.items():
            if where == "value":
                now[k] = v
            elif torch.is_tensor(now.get(k)) and now[k].shape == v.shape and now[k].dtype == v.dtype:
                now[k].copy_(v)
            else:
                now[k] = v.to(where)
    for group, kept in zip(opt.param_groups, groups):
        for k in list(group.keys()):
            if k != "params" and k not in kept:
                del group[k]
        group.update(kept)
    for k, v in extra.items():
        setattr(opt, k, v)


def _dict_copy(obj, keep):
    memo = dict(keep)
    return copy.deepcopy(dict(obj.__dict__), memo)


def _rng_state(torch):
    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        state["numpy"] = numpy.random.get_state()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(torch, state):
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "numpy" in state:
        sys.modules["numpy"].random.set_state(state["numpy"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])
