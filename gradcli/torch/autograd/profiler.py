"""torch.autograd.profiler: `profile` and `record_function` as context managers that
run the code and record nothing (gradcli has no kernels to time). Reading results
says so instead of inventing numbers."""

from __future__ import annotations

_NO_RESULTS = "torch.autograd.profiler results are not supported by gradcli (it records nothing)"


class profile:  # noqa: N801 - torch's name
    """`with torch.autograd.profiler.profile(): ...` runs the block unchanged."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device=None,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_kineto: bool = True, use_cpu: bool = True,
                 experimental_config=None, acc_events: bool = False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.entered = False

    def __enter__(self):
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, *exc):
        return False

    def _no_results(self, *args, **kwargs):
        raise RuntimeError(_NO_RESULTS)

    key_averages = table = total_average = export_chrome_trace = self_cpu_time_total = _no_results


class record_function:  # noqa: N801 - torch's name
    """A named region: a no-op context manager (and decorator)."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*a, **k):
            with record_function(self.name):
                return fn(*a, **k)

        return wrapper
