"""torch.autograd.profiler: `profile` and `record_function` work as context managers and
record nothing (gradcli has no kernels to time), so scripts that wrap code in them run."""

from __future__ import annotations

__all__ = ["profile", "record_function"]


class EventList(list):
    """The (empty) list of recorded events."""

    def table(self, *args, **kwargs) -> str:
        return ""

    def total_average(self):
        return None


class profile:  # noqa: N801 - torch's name
    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = True, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False, custom_trace_id_callback=None):
        self.enabled = enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        return EventList()

    def events(self) -> EventList:
        return EventList()

    def table(self, *args, **kwargs) -> str:
        return ""

    @property
    def self_cpu_time_total(self) -> float:
        return 0.0

    def __str__(self) -> str:
        return ""


class record_function:  # noqa: N801 - torch's name
    def __init__(self, name: str, args=None):
        self.name = name
        self.args = args

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __call__(self, fn):
        """As a decorator: the function runs inside the (recording-nothing) region."""
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)

        return wrapper
