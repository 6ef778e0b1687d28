"""How much of PyTorch's own op database gradcli reproduces: `python -m gradcli.coverage`.

PyTorch tests every op with its OpInfo list (`op_db` in
torch.testing._internal.common_methods_invocations). Every OpInfo that is differentiable
in float64 on CPU is run here through
gradcli and PyTorch, on its sample inputs and its reference inputs (at most
`MAX_SAMPLES` of each): values, dtypes, `grad_fn` names and vector-Jacobian products must
agree within torch.testing's default tolerances. An op passes when every sample does.

Needs PyTorch (and `expecttest`, which PyTorch's test helpers import): this module is
never imported by gradcli itself, only by this command and tests/test_opinfo.py.
"""

from __future__ import annotations

import sys
import types

MAX_SAMPLES = 4  # per op, from each of sample_inputs and reference_inputs
OUT_OF_SCOPE_PREFIXES: tuple = ()  # (every differentiable OpInfo is in scope)

#: ops gradcli has, whose OpInfo samples are known not to pass yet: name -> why
KNOWN_FAILING: dict[str, str] = {}


class Unsupported(Exception):
    """A sample gradcli cannot even express (a dtype or argument type it has no equivalent
    of): the sample is left out, not counted as a failure."""


def load_op_db():
    """The differentiable float64 CPU OpInfos, in op_db's order (imports PyTorch)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    return [op for op in op_db
            if op.supports_autograd and torch.float64 in op.supported_dtypes("cpu")
            and not op.name.startswith(OUT_OF_SCOPE_PREFIXES)]


def op_id(op) -> str:
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _gt():
    import gradcli.torch as gt
    import gradcli.torch.nn.functional  # noqa: F401

    return gt


def _lookup(root, dotted: str):
    obj = root
    for part in dotted.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None
    return obj


def resolve(op):
    """The gradcli callable for an OpInfo, or None when gradcli lacks it.

    The OpInfo's own wrappers (lambdas in PyTorch's test modules) are called with their
    `torch` global pointing at gradcli.torch; builtins are found by the OpInfo's name in
    gradcli.torch's namespaces, else as a Tensor method."""
    gt = _gt()
    from gradcli.engine.tensor import Tensor, _Unsupported

    fn = op.op
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, types.FunctionType) and module.startswith("torch.testing"):
        scope = dict(fn.__globals__)
        scope["torch"] = gt
        if "F" in scope:
            scope["F"] = gt.nn.functional
        if "wrapper_set_seed" in scope:
            scope["wrapper_set_seed"] = _seeded
        return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
    if type(fn).__name__ in ("OpOverload", "OpOverloadPacket") and module.startswith("torch"):
        # an aten op itself (aten.slice.Tensor, aten._safe_softmax.default): gradcli's
        # torch.ops.aten of the same name and overload
        packet, _, overload = str(fn).removeprefix("aten.").partition(".")
        try:
            found = getattr(gt.ops.aten, packet)
            return getattr(found, overload) if overload else found
        except AttributeError:
            return None
    name = op.name
    found = _lookup(gt, name)
    if found is not None and not isinstance(found, (types.ModuleType, gt.dtype)):
        return found  # (torch.cfloat is a dtype: the OpInfo "cfloat" is Tensor.cfloat)
    method = getattr(Tensor, name, None)
    if method is None or isinstance(method, _Unsupported):
        return None
    return lambda x, *args, **kwargs: getattr(x, name)(*args, **kwargs)


def _seeded(fn, *args, **kwargs):
    """PyTorch's wrapper_set_seed for gradcli: the random ops' OpInfo wrappers seed the
    generator with 42 around the call and restore its state after (PyTorch's own wrapper
    seeds PyTorch's generator, not gradcli's)."""
    gt = _gt()
    state = gt.get_rng_state()
    gt.manual_seed(42)
    try:
        return fn(*args, **kwargs)
    finally:
        gt.set_rng_state(state)


def _convert(value, gt, memo):
    """A sample's argument for gradcli: tensors through numpy (leaves keep requires_grad),
    dtypes by name; what has no gradcli equivalent raises Unsupported."""
    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        key = id(value)
        if key in memo:
            return memo[key][1]
        if value.layout == torch.sparse_csr and value.dim() == 2:
            ours = _sparse_csr_leaf(value, gt)
            memo[key] = (value, ours)
            return ours
        if value.layout != torch.strided:
            raise Unsupported(f"{value.dtype} / {value.layout} tensor")
        dtype = getattr(gt, str(value.dtype).replace("torch.", ""), None)
        if dtype is None or not isinstance(dtype, type(gt.float64)):
            raise Unsupported(str(value.dtype))
        from gradcli.engine.tensor import make

        # a copy in the same memory order (a transposed leaf stays transposed, so
        # contiguous() copies it as PyTorch's does)
        data = value.detach().numpy().copy(order="K")
        if not value.is_contiguous() and data.flags.c_contiguous and data.ndim:
            spaced = np.empty(data.shape[:-1] + (2 * data.shape[-1],), data.dtype)
            spaced[..., ::2] = data  # a strided leaf, as PyTorch's non-contiguous samples
            data = spaced[..., ::2]
        ours = make(data, value.requires_grad and data.dtype.kind in "fc", None)
        memo[key] = (value, ours)
        return ours
    if isinstance(value, torch.dtype):
        dtype = getattr(gt, str(value).replace("torch.", ""), None)
        if dtype is None or not isinstance(dtype, type(gt.float64)):
            raise Unsupported(str(value))
        return dtype
    if isinstance(value, torch.Size):
        return tuple(value)
    if isinstance(value, (list, tuple)):
        converted = [_convert(v, gt, memo) for v in value]
        return type(value)(converted) if type(value) in (list, tuple) else tuple(converted)
    if isinstance(value, dict):
        return {k: _convert(v, gt, memo) for k, v in value.items()}
    if isinstance(value, torch.device):
        if value.type != "cpu":
            raise Unsupported(str(value))
        return "cpu"
    if isinstance(value, torch.memory_format):
        if value is torch.preserve_format or value is torch.contiguous_format:
            return None  # gradcli's tensors keep their layout; values do not depend on it
        raise Unsupported(str(value))
    if isinstance(value, torch.Generator):
        raise Unsupported(type(value).__name__)
    if isinstance(value, torch.nn.Module):
        return _stateless_module(value, gt)
    return value


def _sparse_csr_leaf(value, gt):
    """A sparse CSR matrix argument (sparse.mm.reduce's, sampled_addmm's): gradcli's CSR
    matrix of the same compressed rows, columns and values, a leaf as the sample's is."""
    dtype = getattr(gt, str(value.dtype).replace("torch.", ""), None)
    if dtype is None or not isinstance(dtype, type(gt.float64)):
        raise Unsupported(str(value.dtype))
    return gt.sparse_csr_tensor(
        value.crow_indices().tolist(), value.col_indices().tolist(),
        gt.tensor(value.values().detach().numpy().copy(), dtype=dtype), tuple(value.shape),
        requires_grad=value.requires_grad)


def _storage_view_leaf(value, gt):
    """A leaf that is a view into a larger storage (as_strided.partial_views' inputs):
    gradcli's copy of the whole storage, viewed with the leaf's sizes, strides and offset,
    made a leaf as the sample's is (its base does not require grad)."""
    import torch

    dtype = getattr(gt, str(value.dtype).replace("torch.", ""), None)
    if dtype is None or not isinstance(dtype, type(gt.float64)):
        raise Unsupported(str(value.dtype))
    count = value.untyped_storage().nbytes() // value.element_size()
    whole = torch.as_strided(value.detach(), (count,), (1,), 0)
    base = gt.tensor(whole.numpy().copy(), dtype=dtype)
    view = base.as_strided(tuple(value.shape), value.stride(), value.storage_offset())
    return view.requires_grad_(value.requires_grad)


def _strided(t):
    """PyTorch's tensor as values to compare with: a sparse one's dense equivalent."""
    import torch

    return t if t.layout == torch.strided else t.detach().to_dense()


def _stateless_module(module, gt):
    """A parameter-free torch.nn.Module argument (a distance_function=PairwiseDistance()):
    its own forward, run with its module's `torch`/`F` pointing at gradcli's, on the same
    instance (which only lends its settings: norm, eps...)."""
    import torch

    if any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
        raise Unsupported(f"{type(module).__name__} with parameters")
    forward = type(module).forward
    scope = dict(forward.__globals__)
    if "torch" in scope:
        scope["torch"] = gt
    if scope.get("F") is torch.nn.functional:
        scope["F"] = gt.nn.functional
    fn = types.FunctionType(forward.__code__, scope, forward.__name__, forward.__defaults__,
                            forward.__closure__)
    return lambda *args, **kwargs: fn(module, *args, **kwargs)


def _flat(out):
    if isinstance(out, (list, tuple)):
        items = []
        for o in out:
            items.extend(_flat(o))
        return items
    return [out]


def _compare_outputs(ours, theirs, where: str) -> None:
    import numpy as np
    import torch

    fo, ft = _flat(ours), _flat(theirs)
    if len(fo) != len(ft):
        raise AssertionError(f"{where}: {len(fo)} outputs, PyTorch {len(ft)}")
    for i, (o, t) in enumerate(zip(fo, ft, strict=True)):
        if not isinstance(t, torch.Tensor):
            if isinstance(o, type(_gt().tensor(0))):
                raise AssertionError(f"{where}[{i}]: a Tensor where PyTorch gives {t!r}")
            if o != t and not (o != o and t != t):
                raise AssertionError(f"{where}[{i}]: {o!r}, PyTorch {t!r}")
            continue
        if not hasattr(o, "_data"):
            raise AssertionError(f"{where}[{i}]: {type(o).__name__} where PyTorch gives a Tensor")
        if str(o.dtype) != str(t.dtype):
            raise AssertionError(f"{where}[{i}]: dtype {o.dtype}, PyTorch {t.dtype}")
        if tuple(o.shape) != tuple(t.shape):
            raise AssertionError(f"{where}[{i}]: shape {tuple(o.shape)}, PyTorch {tuple(t.shape)}")
        ours_values = np.array(o._data)
        if ours_values.dtype.kind == "V":  # (bfloat16: torch reads it widened, exactly)
            ours_values = torch.from_numpy(ours_values.astype(np.float32)).to(t.dtype)
        else:
            ours_values = torch.from_numpy(ours_values)
        torch.testing.assert_close(ours_values, _strided(t.detach()),
                                   equal_nan=True, msg=lambda m, w=where, k=i: f"{w}[{k}]: {m}")
        ours_fn = type(o.grad_fn).__name__ if o.grad_fn is not None else None
        theirs_fn = type(t.grad_fn).__name__ if t.grad_fn is not None else None
        if ours_fn != theirs_fn:
            raise AssertionError(f"{where}[{i}]: grad_fn {ours_fn}, PyTorch {theirs_fn}")


def _vjp(module, outputs, inputs, cotangents):
    pairs = [(o, c) for o, c in zip(outputs, cotangents, strict=True) if c is not None]
    if not pairs or not inputs:
        return None
    return module.autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs],
                                allow_unused=True)


def check_sample(fn, sample, seed: int, reads_storage: bool = False) -> None:
    """Run one SampleInput through gradcli and PyTorch; AssertionError on a difference,
    Unsupported when gradcli cannot express the sample. `reads_storage`: the op reads
    its input's storage beyond the input (as_strided): an input that is a view into a
    larger storage is converted with that whole storage (_storage_view_leaf)."""
    import numpy as np
    import torch

    gt = _gt()
    memo: dict = {}
    if reads_storage and isinstance(sample.input, torch.Tensor) and (
            sample.input.untyped_storage().nbytes()
            > sample.input.numel() * sample.input.element_size()):
        # (as_strided reads the storage around its input: the same storage, the same view)
        memo[id(sample.input)] = (sample.input, _storage_view_leaf(sample.input, gt))
    ours_args = _convert((sample.input, *sample.args), gt, memo)
    ours_kwargs = _convert(dict(sample.kwargs), gt, memo)
    # the random ops (normal, bernoulli, dropout...) draw PyTorch's numbers bit for bit
    # from the same seed: both generators start the sample from it
    torch.manual_seed(seed)
    try:
        theirs = sample.output_process_fn_grad(
            _call_torch(sample))
    except Exception as err:  # noqa: BLE001 - PyTorch refusing a sample: not ours to check
        raise Unsupported(f"PyTorch raised {type(err).__name__}") from err
    gt.manual_seed(seed)
    try:
        ours = fn(*ours_args, **ours_kwargs)
    except Unsupported:
        raise
    except Exception as err:  # noqa: BLE001 - any failure of gradcli's is a difference
        raise AssertionError(f"gradcli raised {type(err).__name__}: {err}") from err
    try:
        ours = sample.output_process_fn_grad(ours)
    except Exception as err:  # noqa: BLE001
        raise AssertionError(f"output_process_fn_grad: {type(err).__name__}: {err}") from err
    _compare_outputs(ours, theirs, "output")

    t_outs = [t for t in _flat(theirs) if isinstance(t, torch.Tensor)]
    o_outs = [o for o in _flat(ours) if hasattr(o, "_data")]
    leaves = [(t, o) for t, o in memo.values() if t.requires_grad and o.requires_grad]
    if not leaves:
        return
    rng = np.random.default_rng(seed)
    t_cots, o_cots = [], []
    for t in t_outs:
        if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex):
            c = rng.uniform(-1, 1, size=tuple(t.shape))
            if t.dtype.is_complex:  # (a complex output's cotangent: both parts drawn)
                c = c + 1j * rng.uniform(-1, 1, size=tuple(t.shape))
            t_cots.append(torch.tensor(c, dtype=t.dtype))
            o_cots.append(gt.tensor(c, dtype=getattr(gt, str(t.dtype).replace("torch.", ""))))
        else:
            t_cots.append(None)
            o_cots.append(None)
    try:
        theirs_g = _vjp(torch, t_outs, [t for t, _ in leaves], t_cots)
    except Exception:  # noqa: BLE001 - PyTorch has no derivative here: nothing to compare
        return
    if theirs_g is None:
        return
    try:
        ours_g = _vjp(gt, o_outs, [o for _, o in leaves], o_cots)
    except Exception as err:  # noqa: BLE001
        raise AssertionError(f"gradcli's backward raised {type(err).__name__}: {err}") from err
    for i, (og, tg) in enumerate(zip(ours_g, theirs_g, strict=True)):
        if tg is None:
            # (some samples' leaves were made with no edge, so PyTorch's graph never
            # reaches them: gradcli's fresh leaves are not comparable there)
            continue
        if og is None:
            if not _zero(tg):
                raise AssertionError(f"grad[{i}]: None, PyTorch {tg!r}")
            continue
        _compare_outputs([og.detach()], [tg.detach()], f"grad[{i}]")


def _zero(t) -> bool:
    import numpy as np

    data = t._data if hasattr(t, "_data") else t.detach().numpy()
    return not np.any(data)


def _call_torch(sample):
    return _CURRENT[0](sample.input, *sample.args, **sample.kwargs)


_CURRENT: list = [None]


def samples_of(op):
    """Up to MAX_SAMPLES of the OpInfo's sample inputs, then as many reference inputs."""
    import torch

    for source in (op.sample_inputs, op.reference_inputs):
        try:
            gen = source("cpu", torch.float64, requires_grad=True)
            count = 0
            for sample in gen:
                yield sample
                count += 1
                if count >= MAX_SAMPLES:
                    break
        except Exception:  # noqa: BLE001, S112 - a generator PyTorch itself cannot run here
            continue


def check_op(op) -> tuple[str, str]:
    """("pass" | "missing" | "fail" | "no samples", detail) for one OpInfo."""
    fn = resolve(op)
    if fn is None:
        return "missing", op.name
    _CURRENT[0] = op.op
    ran = 0
    for i, sample in enumerate(samples_of(op)):
        try:
            check_sample(fn, sample, seed=i, reads_storage=op.name.startswith("as_strided"))
        except Unsupported:
            continue
        except AssertionError as err:
            text = str(err)
            if "is not supported by gradcli" in text or "object has no attribute" in text:
                return "missing", text.splitlines()[0]
            return "fail", f"sample {i}: {text.splitlines()[0][:300]}"
        except Exception as err:  # noqa: BLE001 - a crash in comparing is a failure too
            return "fail", f"sample {i}: {type(err).__name__}: {str(err)[:300]}"
        ran += 1
    if not ran:
        return "no samples", "every sample uses a dtype or argument gradcli lacks"
    return "pass", f"{ran} samples"


USAGE = """usage: python -m gradcli.coverage [OP ...]

Runs PyTorch's OpInfo samples (float64, CPU, differentiable;)
through gradcli and PyTorch and prints how many ops agree: values, dtypes (complex
included), grad_fn names and vector-Jacobian products. OP names (as `add`, or with a
variant, `max.reduction_with_dim`) restrict the run to those ops. Needs PyTorch and
expecttest."""


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if any(a in ("-h", "--help") for a in argv):
        print(USAGE)
        return 0
    unknown = [a for a in argv if a.startswith("-")]
    if unknown:
        print(f"gradcli.coverage: unknown option {unknown[0]}\n\n{USAGE}", file=sys.stderr)
        return 2
    try:
        import torch  # noqa: F401
        import torch.testing._internal.common_methods_invocations  # noqa: F401
    except ImportError as err:
        print(f"gradcli.coverage needs PyTorch 2.13 and expecttest to compare against "
              f"(pip install torch expecttest): {err}", file=sys.stderr)
        return 2
    import warnings

    warnings.simplefilter("ignore")
    ops = load_op_db()
    if argv:
        ops = [op for op in ops if op.name in argv or op_id(op) in argv]
    results = {}
    for op in ops:
        results[op_id(op)] = check_op(op)
    passed = [k for k, (s, _) in results.items() if s == "pass"]
    missing = [k for k, (s, _) in results.items() if s == "missing"]
    failing = {k: d for k, (s, d) in results.items() if s in ("fail", "no samples")}
    print(f"{len(passed)} of {len(results)} differentiable ops")
    print(f"missing ({len(missing)}): {' '.join(missing)}")
    print(f"failing ({len(failing)}):")
    for name, detail in failing.items():
        print(f"  {name}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
