"""torch.autograd.profiler_util: the profiler's event objects and its summary table.

FunctionEvent (one recorded call: name, time range in microseconds, thread, input
shapes, its nested calls), FunctionEventAvg (the events of one key added up),
EventList (a list of either, with key_averages / table / export_chrome_trace), and
the time formatting PyTorch's table uses. Field names, table columns and number
formats follow PyTorch 2.13's, so code reading a profile reads gradcli's the same way.
"""

from __future__ import annotations

from collections import defaultdict

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


def _format_time(time_us) -> str:
    """Microseconds as the table prints them: 1.500s, 12.000ms, 3.250us."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us) -> str:
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class _Times:
    """The *_str and per-call average properties both event classes share."""

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self) -> float:
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    cpu_time_str = property(lambda self: _format_time(self.cpu_time))
    device_time_str = property(lambda self: _format_time(self.device_time))
    cpu_time_total_str = property(lambda self: _format_time(self.cpu_time_total))
    device_time_total_str = property(lambda self: _format_time(self.device_time_total))
    self_cpu_time_total_str = property(lambda self: _format_time(self.self_cpu_time_total))
    self_device_time_total_str = property(lambda self: _format_time(self.self_device_time_total))


class Interval:
    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent(_Times):
    """One recorded call (an op, a backward node, a record_function range)."""

    def __init__(self, id, name, thread, start_us, end_us, overload_name=None,  # noqa: A002
                 fwd_thread=None, input_shapes=None, stack=None, scope=0, use_device=None,
                 cpu_memory_usage=0, device_memory_usage=0, is_async=False, is_remote=False,
                 sequence_nr=-1, node_id=-1, device_type="DeviceType.CPU", device_index=0,
                 device_resource_id=None, is_legacy=False, flops=None, trace_name=None,
                 concrete_inputs=None, kwinputs=None, is_user_annotation=False):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name
        self.trace_name = trace_name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels: list = []
        self.count = 1
        self.cpu_children: list = []
        self.cpu_parent = None
        self.input_shapes = input_shapes
        self.concrete_inputs = concrete_inputs
        self.kwinputs = kwinputs
        self.stack = stack
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = device_resource_id if device_resource_id is not None else thread
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation

    def append_cpu_child(self, child) -> None:
        if not isinstance(child, FunctionEvent):
            raise TypeError("Expected child to be a FunctionEvent")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent) -> None:
        self.cpu_parent = parent

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    device_time_total = 0
    self_device_time_total = 0
    self_cpu_memory_usage = 0
    self_device_memory_usage = 0

    @property
    def key(self):
        return self.name

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name={self.overload_name} "
                f"device_type={self.device_type} node_id={self.node_id} "
                f"cpu_time={self.cpu_time_str} start_us={self.time_range.start} "
                f"end_us={self.time_range.end} "
                f"cpu_children={[c.id for c in self.cpu_children]} {self.use_device}_time="
                f"{self.device_time_str} name={self.name} thread={self.thread} "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"{self.use_device}_memory_usage={self.device_memory_usage} "
                f"is_async={self.is_async} is_remote={self.is_remote} "
                f"seq_nr={self.sequence_nr} is_legacy={self.is_legacy}>")


class FunctionEventAvg(_Times):
    """The events of one key, added up (what key_averages lists)."""

    def __init__(self) -> None:
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = "DeviceType.CPU"
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise TypeError("Expected other to be a FunctionEvent or FunctionEventAvg")
        if self.key is None:  # the first event added gives the descriptive fields
            for field in ("key", "node_id", "is_async", "is_remote", "cpu_parent",
                          "cpu_children", "overload_name", "input_shapes", "stack", "scope",
                          "device_type", "is_legacy", "use_device", "is_user_annotation"):
                setattr(self, field, getattr(other, field))
        if other.key != self.key:
            raise ValueError(f"Expected keys to match, but got {other.key} vs {self.key}")
        for field in ("cpu_time_total", "device_time_total", "self_cpu_time_total",
                      "self_device_time_total", "cpu_memory_usage", "device_memory_usage",
                      "self_cpu_memory_usage", "self_device_memory_usage", "count"):
            setattr(self, field, getattr(self, field) + getattr(other, field))
        if other.flops:
            self.flops = (self.flops or 0) + other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self) -> str:
        dev = self.use_device or "cuda"
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_{dev}_time={self.self_device_time_total_str} "
                f"{dev}_time={self.device_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} {dev}_memory_usage="
                f"{self.device_memory_usage}>")


class EventList(list):
    """A list of FunctionEvent (or FunctionEventAvg) with the profiler's summaries."""

    def __init__(self, *args, use_device=None, profile_memory=False, with_flops=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops
        self._tree_built = False

    def _build_tree(self) -> None:
        self._populate_cpu_children()
        self._tree_built = True

    def _populate_cpu_children(self) -> None:
        """Nest each thread's events by their time ranges (an event is the child of the
        innermost event still open when it starts), as PyTorch's profiler does."""
        by_thread = defaultdict(list)
        for evt in self:
            if not evt.is_async and evt.device_type == "DeviceType.CPU":
                by_thread[evt.thread].append(evt)
        for events in by_thread.values():
            events.sort(key=lambda e: (e.time_range.start, -e.time_range.end))
            open_events: list = []
            for evt in events:
                while open_events:
                    top = open_events[-1]
                    if evt.time_range.start >= top.time_range.end or \
                            evt.time_range.end > top.time_range.end:
                        open_events.pop()
                    else:
                        top.append_cpu_child(evt)
                        evt.set_cpu_parent(top)
                        break
                open_events.append(evt)

    def __str__(self) -> str:
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None) -> str:
        return _build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                            max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width,
                            top_level_events_only=top_level_events_only, time_unit=time_unit,
                            profile_memory=self._profile_memory)

    def export_chrome_trace(self, path) -> None:
        """The events as a Chrome trace ("X" events, times in microseconds)."""
        import json

        trace = [{"name": evt.trace_name or evt.name, "ph": "X", "ts": evt.time_range.start,
                  "dur": evt.time_range.elapsed_us(), "tid": evt.thread, "pid": "CPU functions",
                  "args": {}} for evt in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": trace}, f)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One FunctionEventAvg per key (name; with the input shapes, the top stack
        entries, the overload name when asked), in the order keys first appear."""
        stats: dict = defaultdict(FunctionEventAvg)
        for evt in self:
            key = [str(evt.key), str(evt.node_id), str(evt.device_type), str(evt.is_legacy),
                   str(evt.is_user_annotation)]
            if group_by_overload_name:
                key.append(str(evt.overload_name))
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += list(evt.stack or ())[:group_by_stack_n]
            stats[tuple(key)].add(evt)
        out = EventList(stats.values(), use_device=self._use_device,
                        profile_memory=self._profile_memory, with_flops=self._with_flops)
        for avg in out:
            avg.stack = (avg.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for evt in self:
            total.add(evt)
            total.key = None
        total.key = "Total"
        return total


def _build_table(events, sort_by=None, header=None, row_limit=100, max_name_column_width=55,
                 max_shapes_column_width=80, top_level_events_only=False, time_unit=None,
                 profile_memory=False) -> str:
    """PyTorch's summary table of `events` (CPU columns; gradcli has no device time)."""
    if len(events) == 0:
        return ""
    has_shapes = any(evt.input_shapes for evt in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda evt: getattr(evt, attr), reverse=True)
    name_width = max(len(evt.key) for evt in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(evt.input_shapes)) for evt in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{: >" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    def when(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)

    total_self = sum(evt.self_cpu_time_total for evt in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [sep, row_format.format(*headers), sep]
    shown = 0
    for evt in events:
        if shown == row_limit:
            break
        if top_level_events_only and evt.cpu_parent is not None:
            continue
        shown += 1
        name = evt.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(evt.self_cpu_time_total, total_self),
               when(evt.self_cpu_time_total),
               _format_time_share(evt.cpu_time_total, total_self) if not evt.is_async else 0,
               when(evt.cpu_time_total), when(evt.cpu_time)]
        if profile_memory:
            row += [_format_memory(evt.cpu_memory_usage), _format_memory(evt.self_cpu_memory_usage)]
        row.append(evt.count)
        if has_shapes:
            row.append(str(evt.input_shapes)[:shapes_width])
        lines.append(row_format.format(*row))
    lines += [sep, f"Self CPU time total: {when(total_self)}"]
    return "\n".join(lines) + "\n"
