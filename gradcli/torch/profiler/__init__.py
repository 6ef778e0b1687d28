"""torch.profiler: the newer profiler API over the same recorder as
torch.autograd.profiler (gradcli/engine/profiler.py): `profile(activities=, schedule=,
on_trace_ready=, record_shapes=)` with start/stop/step, `schedule`, `ProfilerActivity`,
`ProfilerAction`, `record_function`. The CPU is the only activity; a schedule records
its active steps and hands each finished cycle to on_trace_ready, as PyTorch's does."""

from __future__ import annotations

import enum

from gradcli.engine import profiler as _recorder
from gradcli.torch.autograd.profiler import profile as _AutogradProfile
from gradcli.torch.autograd.profiler import record_function

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self) -> str:
        return f"<ProfilerActivity.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"ProfilerActivity.{self.name}"


ProfilerActivity.__module__ = "torch._C._profiler"


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    return {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """step number -> ProfilerAction: skip_first steps, then cycles of wait, warmup and
    active steps (the last active one RECORD_AND_SAVE), `repeat` cycles (0: forever)."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings

        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      UserWarning, stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise ValueError(f"Invalid step number: {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and step < wait:
            return ProfilerAction.NONE
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


_CLEARS_WARNED = [False]


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


class profile(_AutogradProfile):  # noqa: N801 - torch's name
    """Profile a block (or, with a schedule, the steps it says to record)."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda=None, custom_trace_id_callback=None,
                 post_processing_timeout_s=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops, acc_events=acc_events)
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = (schedule or _always_record)(0)
        self._step_range = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False

    def _begin(self) -> None:
        if self._recorder is not None and not self.acc_events and not _CLEARS_WARNED[0]:
            import warnings

            _CLEARS_WARNED[0] = True  # (once per process, as PyTorch's _warn_once)
            warnings.warn(
                "Warning: Profiler clears events at the end of each cycle. Only events from the "
                "current cycle will be reported. To keep events across cycles, set "
                "acc_events=True.", UserWarning, stacklevel=2)
        self._stopped = False
        self._function_events = None
        self._recorder = _recorder.start(self.record_shapes)

    def _end(self, save: bool) -> None:
        if self._step_range is not None:
            _recorder.exit_range(self._step_range)
            self._step_range = None
        if self._recorder is not None:
            _recorder.stop(self._recorder)
        self._stopped = True
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _recording(self) -> bool:
        return self.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)

    def start(self) -> None:
        if self._recording():
            self._begin()
            self._open_step()

    def stop(self) -> None:
        if self._recording():
            self._end(save=True)
        self.current_action = ProfilerAction.NONE

    def _open_step(self) -> None:
        if self.record_steps and self._recording():
            self._step_range = _recorder.enter_range(f"ProfilerStep#{self.step_num}")

    def step(self) -> None:
        """Mark the end of a step: the schedule decides what the next one does."""
        if self.schedule is None:
            self.step_num += 1
            return
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        was_recording = prev in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if was_recording:
            if self._step_range is not None:
                _recorder.exit_range(self._step_range)
                self._step_range = None
            if prev == ProfilerAction.RECORD_AND_SAVE:
                self._end(save=True)
        if self._recording():
            if not was_recording or prev == ProfilerAction.RECORD_AND_SAVE:
                self._begin()
            self._open_step()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False):
        events = self._events()
        steps = [e for e in events if e.name.startswith("ProfilerStep#")]
        names = [e.name for e in steps]
        for e in steps:  # (PyTorch's step ranges average under one name)
            e.name = "ProfilerStep*"
        try:
            return events.key_averages(group_by_input_shape, group_by_stack_n,
                                       group_by_overload_name)
        finally:
            for e, name in zip(steps, names):
                e.name = name
