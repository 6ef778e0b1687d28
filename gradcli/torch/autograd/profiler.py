"""torch.autograd.profiler: `profile` records the ops a block runs (as PyTorch's
"aten::mul", "aten::linear", the backward nodes, `record_function` ranges) with their
wall-clock times, nesting and, with record_shapes=True, input shapes; `function_events`,
`key_averages()`, `table()` and `export_chrome_trace()` read them as PyTorch's do.
The recording itself is gradcli/engine/profiler.py (nothing is recorded, and nothing
costs, outside a profile)."""

from __future__ import annotations

import functools

from gradcli.engine import profiler as _recorder
from gradcli.engine.ops.registry import PUBLIC as _PUBLIC
from gradcli.engine.ops.registry import public as _public

from .profiler_util import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401

__all__ = ["profile", "record_function"]


def kineto_available() -> bool:
    """True, as PyTorch's CPU build answers: gradcli's recorder stands in for Kineto, so
    code choosing `use_kineto=kineto_available()` gets the same profile either way."""
    return True


def _profiler_enabled() -> bool:
    return _recorder.enabled()


class profile:  # noqa: N801 - torch's name
    """Context manager: record the ops run inside it (see the module docstring)."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self._recorder = None
        self._stopped = False
        self._entered = False
        self._function_events = None

    def __enter__(self):
        if not self.enabled:
            return None  # (PyTorch's: `with profile(enabled=False) as p` binds None)
        if self._entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._entered = True
        self._function_events = None
        self._recorder = _recorder.start(self.record_shapes)
        return self

    def __exit__(self, *exc) -> bool:
        if not self.enabled:
            return False
        if self._recorder is not None:
            _recorder.stop(self._recorder)
        self._stopped = True
        return False

    def _events(self) -> EventList:
        if self._function_events is not None:
            return self._function_events
        if self._recorder is None or not self._stopped:
            # (never started, or still recording: PyTorch has no results yet, an empty list)
            return EventList(use_device=self.use_device, profile_memory=self.profile_memory,
                             with_flops=self.with_flops)
        raw = self._recorder.events
        t0 = raw[0][1] if raw else 0
        events = EventList(use_device=self.use_device, profile_memory=self.profile_memory,
                           with_flops=self.with_flops)
        made = []
        for i, (name, start, end, shapes, thread, parent) in enumerate(raw):
            evt = FunctionEvent(id=i + 1, name=name, thread=thread,
                                start_us=(start - t0) / 1000.0, end_us=(end - t0) / 1000.0,
                                input_shapes=shapes, fwd_thread=thread, use_device=self.use_device,
                                is_user_annotation=not (name.startswith("aten::") or
                                                        "Backward" in name or "autograd" in name))
            made.append(evt)
            if parent >= 0:
                made[parent].append_cpu_child(evt)
                evt.set_cpu_parent(made[parent])
            events.append(evt)
        events._tree_built = True
        self._function_events = events
        return events

    @property
    def function_events(self) -> EventList:
        return self._events()

    def events(self) -> EventList:
        return self._events()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return self._events().key_averages(group_by_input_shape, group_by_stack_n,
                                           group_by_overload_name)

    def total_average(self):
        return self._events().total_average()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False) -> str:
        return self._events().table(sort_by=sort_by, row_limit=row_limit,
                                    max_src_column_width=max_src_column_width,
                                    max_name_column_width=max_name_column_width,
                                    max_shapes_column_width=max_shapes_column_width,
                                    header=header, top_level_events_only=top_level_events_only)

    def export_chrome_trace(self, path) -> None:
        self._events().export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        return self._events().self_cpu_time_total

    def __str__(self) -> str:
        if not self._stopped:
            return "<unfinished torch.autograd.profile>"
        return str(self._events())

    def __repr__(self) -> str:
        if not self._stopped:
            return "<unfinished torch.autograd.profile>"
        return repr(self._events())


class emit_itt:  # noqa: N801 - torch's name
    """Intel ITT ranges: nothing to emit to (PyTorch's CPU build runs the block too)."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


class emit_nvtx(emit_itt):  # noqa: N801 - torch's name
    """NVTX ranges need CUDA: entering says so, as PyTorch's CPU build does."""

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self


class record_function:  # noqa: N801 - torch's name
    """A labelled range in the profile (a context manager, or a decorator)."""

    def __init__(self, name: str, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._handle = None

    def __enter__(self):
        self._handle = _recorder.enter_range(self.name)
        return self

    def __exit__(self, *exc) -> None:
        handle, self._handle = self._handle, None
        _recorder.exit_range(handle)

    def __call__(self, fn):
        """As a decorator: each call of the function runs inside its own range."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapper


def _record_function_enter(name: str, args=None):
    """torch.ops.profiler._record_function_enter: open a range, return its handle."""
    return _recorder.enter_range(name)


def _record_function_exit(handle) -> None:
    _recorder.exit_range(handle)


class _OpsNamespace:
    """torch.ops (only its `profiler` namespace: the record_function entry points)."""

    def __init__(self, path: str, members: dict):
        self._path = path
        self.__dict__.update(members)

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        member = _PUBLIC.get(f"{self._path}.{name}")  # (torch.ops.aten: engine/ops/aten_ops.py)
        if member is not None:
            return member
        raise AttributeError(f"{self._path}.{name} is not supported by gradcli")

    def __repr__(self) -> str:
        return f"<module '{self._path}'>"


_public("torch.ops")(_OpsNamespace("torch.ops", {"profiler": _OpsNamespace(
    "torch.ops.profiler", {"_record_function_enter": _record_function_enter,
                           "_record_function_enter_new": _record_function_enter,
                           "_record_function_exit": _record_function_exit})}))
