"""Optimizer: parameter groups, per-parameter state, zero_grad, state_dict.

The updates (in the subclasses) follow PyTorch's single-tensor CPU implementation
(`foreach=False`, which is what PyTorch runs for CPU tensors) step for step, on the
parameters' numpy buffers: each PyTorch in-place op becomes the same float32 (or float64)
operation, rounded where PyTorch's kernel rounds. Where its vectorised kernels fuse a
multiply and an add (add with alpha, lerp, addcmul) the float32 result is formed in
float64 and rounded once, as a fused multiply-add rounds. So parameters stay within
rounding of PyTorch's over thousands of steps.
"""

from __future__ import annotations

import functools
from collections import defaultdict

import numpy as np

from gradcli.engine.fpstate import run_quietly
from gradcli.engine.tensor import Tensor, make

__all__ = ["Optimizer", "required"]


def _quiet_step(step):
    @functools.wraps(step)
    def quiet_step(self, *args, **kwargs):
        return run_quietly(step, self, *args, **kwargs)

    return quiet_step


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()

_F32 = np.dtype(np.float32)


_SPLIT = 134217729.0  # 2**27 + 1: Dekker's splitting constant for float64


def _split(x):
    t = _SPLIT * x
    hi = t - (t - x)
    return hi, x - hi


def fma64(a, b, c):
    """a * b + c for float64 with (almost always) one rounding, as a fused multiply-add:
    the product's rounding error (Dekker's two-product) and the sum's (two-sum) are
    added back. numpy has no fma; PyTorch's float64 kernels use one."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bp = s - p
    t = (p - (s - bp)) + (c - bp)
    out = s + (t + err)
    return np.where(np.isfinite(out), out, p + c)


def axpy(alpha, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """y + alpha * x as PyTorch's vectorised kernels form it: alpha in the tensor's dtype,
    one rounding (a fused multiply-add)."""
    if x.dtype == _F32:
        return (x.astype(np.float64) * float(np.float32(alpha)) + y).astype(_F32)
    if x.dtype == np.float64:
        return fma64(x, float(alpha), y)
    if x.dtype.kind == "V":  # bfloat16: as PyTorch's add kernel (ops/bfloat16.py)
        from ...engine.ops.bfloat16 import add_scaled

        return add_scaled(y, x, alpha)
    return y + alpha * x


_SMALL = 16  # up to this many elements, Python floats beat four numpy calls (a bias, Linear(3, 1))


def axpy_into(alpha, x: np.ndarray, y: np.ndarray) -> None:
    """y[...] = axpy(alpha, x, y), the same bits: float32 is formed in a float64 buffer of
    its own and rounded once by the assignment, without axpy's second float32 array and
    np.copyto's Python dispatch (SGD's step, twice per parameter per step). A small
    parameter takes Python floats, which are float64 with the same operations in the same
    order (x * alpha, then + y), rounded to float32 as the assignment rounds."""
    if x.dtype == _F32 and y.dtype == _F32:
        if y.size <= _SMALL and x.shape == y.shape:
            a = float(np.float32(alpha))
            y.flat = [xv * a + yv for xv, yv in zip(x.ravel().tolist(), y.ravel().tolist())]
            return
        wide = x.astype(np.float64)
        wide *= float(np.float32(alpha))
        wide += y
        y[...] = wide
    else:
        np.copyto(y, axpy(alpha, x, y))


def fma_arrays(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """a * b + c, arrays, one rounding."""
    if a.dtype == _F32:
        return (a.astype(np.float64) * b.astype(np.float64) + c).astype(_F32)
    if a.dtype == np.float64:
        return fma64(a, b, c)
    return a * b + c


def scalar(x, dtype):
    """A Python number as the tensor kernel sees it (cast to the tensor's dtype)."""
    return dtype.type(x)


def real(a: np.ndarray) -> np.ndarray:
    """A complex buffer as PyTorch's single-tensor steps see it (`torch.view_as_real`): its
    real and imaginary parts as independent float elements, a writeable view (flat; the
    updates are elementwise). Other buffers as they are."""
    if a.dtype.kind != "c":
        return a
    return a.reshape(-1).view(a.real.dtype)


def write(t: Tensor, values: np.ndarray) -> None:
    """t's buffer := values, in place (views of t see it), and bump its version; a complex
    buffer takes the float values of its real view."""
    np.copyto(t._data if values.dtype.kind == "c" else real(t._data), values)
    t._vc[0] += 1


def check_tensor_lr(lr) -> None:
    """PyTorch's first check: a tensor learning rate must hold one element."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


FUSED_DEVICES = ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', 'privateuseone']


def check_fused_params(group) -> None:
    """fused=True at step: every parameter with a gradient must be a floating-point tensor
    (PyTorch's fused CPU kernels; complex and integer parameters are refused)."""
    for p in group["params"]:
        if p._grad is not None and p._data.dtype.kind not in "fV":
            raise RuntimeError("`fused=True` requires all the params to be floating point "
                               f"Tensors of supported devices: {FUSED_DEVICES} but {p.dtype} "
                               "and cpu")


def check_fused_flags(fused, foreach, differentiable) -> None:
    """The constructor's fused checks (SGD, Adam, AdamW, Adagrad)."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def refuse_capturable(optimizer, group) -> None:
    """capturable=True (CUDA graphs) at step: PyTorch asserts the parameters are on a
    capturable device, which a CPU never is. The list it names depends on the path:
    the foreach path leaves out 'xla' (but RMSprop's and Rprop's), the single-tensor
    path includes it (but Adadelta's)."""
    if not any(p._grad is not None for p in group["params"]):
        return
    name = type(optimizer).__name__
    if group.get("foreach"):
        xla = name in ("RMSprop", "Rprop")
    else:
        xla = name != "Adadelta"
    devices = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
    what = {"ASGD": "params, mus, etas, and state_steps",
            "NAdam": "params, mu_products, and state_steps" if group.get("foreach")
            else "params, mu_products and state_steps"}.get(name, "params and state_steps")
    raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                         f"{devices}.")


def refuse_differentiable_leaf(optimizer, through_view=lambda group: True) -> None:
    """differentiable=True runs PyTorch's step with grad mode on, so its first in-place
    update of a leaf that requires grad is refused by autograd (a complex parameter
    updated through its view_as_real view is a view of the leaf: `through_view(group)`
    says whether the optimizer's first update goes through it). gradcli's steps are not
    recorded, so a leaf parameter is refused up front with autograd's message; a
    non-leaf parameter (what differentiable=True is for) is refused as unsupported."""
    for group in optimizer.param_groups:
        if not group.get("differentiable"):
            continue
        for p in group["params"]:
            if p._grad is None or not p.requires_grad:
                continue
            if p.is_leaf:
                view = "a view of " if p._data.dtype.kind == "c" and through_view(group) \
                    else ""
                raise RuntimeError(f"{view}a leaf Variable that requires grad is being used "
                                   "in an in-place operation.")
            raise RuntimeError("torch.optim's differentiable=True on a non-leaf parameter "
                               "is not supported by gradcli")


def step_tensor(value: float = 0.0, fused=None) -> Tensor:
    """The 0-d tensor PyTorch keeps as a parameter's 'step' (and ASGD's eta and mu):
    float64 when the default dtype is float64, float32 otherwise and for fused=True."""
    from gradcli.engine.dtypes import float64, get_default_dtype

    wide = get_default_dtype() is float64 and not fused
    return make(np.array(value, np.float64 if wide else np.float32))


class Optimizer:
    """Base class of the optimizers: holds param_groups and per-parameter state."""

    def __init_subclass__(cls, **kwargs):
        """gradcli's own optimizers step with numpy's floating-point errors ignored (a
        diverging run overflows to inf and nan silently, as in PyTorch): one Context.run
        a step (engine/fpstate.run_quietly). A user's subclass keeps its numpy state."""
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and cls.__module__.startswith(__name__.rpartition(".")[0] + "."):
            cls.step = _quiet_step(step)

    def __init__(self, params, defaults: dict) -> None:
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            from gradcli.torch.nn.modules.module import _typename

            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        param_groups = list(params)
        if not param_groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    def add_param_group(self, param_group: dict) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        # named_parameters(): (name, tensor) pairs; the names are kept as 'param_names'
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p
                                 for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        differentiable = self.defaults.get("differentiable", None)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                from gradcli.torch.nn.modules.module import _typename

                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not differentiable and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            import warnings

            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if seen & {id(p) for p in param_group["params"]}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)
        self._group_added(param_group)

    @staticmethod
    def _through_view(group) -> bool:
        """Whether a complex parameter's first in-place update goes through its
        view_as_real view (differentiable=True's refusal names a view of the leaf then)."""
        return True

    def _group_added(self, group: dict) -> None:
        """Hook for optimizers that make their state eagerly (Adagrad)."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    # ------------------------------------------------------------ state_dict
    def state_dict(self) -> dict:
        index = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        by_id = {id(p): p for g in self.param_groups for p in g["params"]}
        state = {}
        for p_id, p in by_id.items():
            if p in self.state:
                state[index[p_id]] = self.state[p]
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        groups = self.param_groups
        # copies of the group dicts (never a deep copy: the values are the program's own)
        saved_groups = [dict(g) for g in state_dict["param_groups"]]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old, p in zip(s["params"], g["params"]):
                id_map[old] = p
        self.state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                self.state[param] = {k: _cast_state(param, k, v) for k, v in value.items()}
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.param_groups = new_groups

    def step(self, closure=None):
        raise NotImplementedError

    def _closure_loss(self, closure):
        """Run the closure (with grad mode on) at the start of step(); also notes that
        step() ran, for lr_scheduler's order warning."""
        self._opt_called = True
        if closure is None:
            return None
        from gradcli.engine.grad_mode import enable_grad

        with enable_grad():
            return closure()


def _cast_state(param: Tensor, key: str, value):
    """A loaded state value as PyTorch's `value.to(param.dtype)`: the same tensor when the
    dtype already agrees (so an optimizer loaded from another's live state_dict shares its
    buffers, as in PyTorch), a converted copy otherwise; 'step' and the state of a
    non-float parameter stay as they are."""
    if isinstance(value, Tensor) and key != "step" and param._data.dtype.kind in "fV" \
            and value._data.dtype != param._data.dtype:
        return make(value._data.astype(param._data.dtype))
    return value


Optimizer.__module__ = "torch.optim.optimizer"  # (type(opt) prints as PyTorch's)
