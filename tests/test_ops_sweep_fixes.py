"""Op bugs the public-argument sweeps found, each checked against PyTorch itself:
Tensor.inner on matrices, flip's repeated dims, out= dtype checks and named results,
cat of 0-d tensors, var/std's degrees-of-freedom warning and its location, and
torch.get_num_threads() following OMP_NUM_THREADS / MKL_NUM_THREADS."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


def outcome(call, T):
    """('ok', repr of the result) or (exception type, message) of call(T)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(T)
    except Exception as err:  # noqa: BLE001 - the exception is what is compared
        return type(err).__name__, str(err)
    return "ok", repr(result)


def same_as_torch(call):
    expected = outcome(call, torch)
    assert outcome(call, gt) == expected
    return expected


def _x(T):
    return T.arange(6.0).reshape(2, 3)


@pytest.mark.parametrize("shapes", [((2, 3), (4, 3)), ((3,), (2, 3)), ((2, 2, 3), (3,)),
                                    ((), (2, 3))])
def test_tensor_inner_is_torch_inner(shapes):
    def call(T):
        a = T.arange(float(max(1, _numel(shapes[0])))).reshape(shapes[0])
        b = T.arange(float(_numel(shapes[1]))).reshape(shapes[1]) - 2
        return a.inner(b)

    assert same_as_torch(call)[0] == "ok"


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def test_tensor_inner_mismatch_keeps_pytorchs_error():
    kind, _ = same_as_torch(lambda T: _x(T).inner(T.ones(2, 2)))
    assert kind == "RuntimeError"


@pytest.mark.parametrize("dims", [(0, 0), (1, 0, 1), (2, 1, -1, 1), (0, -3), [1, 1]])
def test_flip_repeated_dims(dims):
    kind, text = same_as_torch(lambda T: T.zeros(2, 3, 4).flip(dims))
    assert "appears multiple times" in text
    assert outcome(lambda T: T.flip(T.zeros(2, 3, 4), dims), gt) == (kind, text)


@pytest.mark.parametrize("call", [lambda T: T.zeros(1, 2, 1).squeeze((0, -3)),
                                  lambda T: T.zeros(1, 2, 1).squeeze(1, 1, 1),
                                  lambda T: T.zeros(1, 2, 1).squeeze_((2, 2)),
                                  lambda T: T.zeros(1, 2, 1).squeeze((0, 2)).shape])
def test_squeeze_repeated_dims(call):
    same_as_torch(call)


def test_flip_varargs_repeated():
    kind, text = same_as_torch(lambda T: T.zeros(2, 3).flip(0, 0))
    assert kind == "RuntimeError"


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "bool", "uint8"])
@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_arg_reductions_refuse_out_of_another_dtype(fn, dtype):
    kind, text = same_as_torch(lambda T: getattr(T, fn)(_x(T), 1, out=T.empty(
        0, dtype=getattr(T, dtype))))
    assert kind == "RuntimeError"


def test_argmax_out_long_still_written():
    kind, text = same_as_torch(lambda T: T.argmax(_x(T), out=T.empty(0, dtype=T.long)))
    assert kind == "ok"


TUPLE_OUTS = {
    "max": lambda T, o: T.max(_x(T), 1, out=o),
    "min": lambda T, o: T.min(_x(T), 1, keepdim=True, out=o),
    "sort": lambda T, o: T.sort(_x(T), 1, out=o),
    "topk": lambda T, o: T.topk(_x(T), 2, out=o),
    "kthvalue": lambda T, o: T.kthvalue(_x(T), 1, out=o),
    "cummax": lambda T, o: T.cummax(_x(T), 1, out=o),
    "cummin": lambda T, o: T.cummin(_x(T), 1, out=o),
    "mode": lambda T, o: T.mode(_x(T), 1, out=o),
    "median": lambda T, o: T.median(_x(T), 1, out=o),
    "nanmedian": lambda T, o: T.nanmedian(_x(T), 1, out=o),
}
OUT_DTYPES = {"right": ("float32", "int64"), "float indices": ("float32", "float32"),
              "int32 indices": ("float32", "int32"), "double values": ("float64", "int64"),
              "long values": ("int64", "int64"), "both wrong": ("int64", "float32")}


@pytest.mark.parametrize("dtypes", list(OUT_DTYPES.values()), ids=list(OUT_DTYPES))
@pytest.mark.parametrize("fn", list(TUPLE_OUTS.values()), ids=list(TUPLE_OUTS))
def test_tuple_outs_dtype_checks_and_named_result(fn, dtypes):
    """The result of an out= call is torch.return_types.NAME_out (its repr too); out
    tensors of a dtype PyTorch refuses give its error."""
    def call(T):
        outs = tuple(T.empty(0, dtype=getattr(T, d)) for d in dtypes)
        result = fn(T, outs)
        return type(result).__name__, result

    assert outcome(call, gt) == outcome(call, torch)


def test_out_tuple_of_the_wrong_length():
    same_as_torch(lambda T: T.max(_x(T), 1, out=(T.empty(0), T.empty(0, dtype=T.long),
                                                  T.empty(0))))


def test_out_list_gives_the_named_result():
    kind, text = same_as_torch(lambda T: T.sort(_x(T), out=[T.empty(0),
                                                               T.empty(0, dtype=T.long)]))
    assert "sort_out" in text


@pytest.mark.parametrize("out_dtype", ["float32", "int32", "int64"])
@pytest.mark.parametrize("int32", [False, True])
def test_searchsorted_out_dtype(out_dtype, int32):
    same_as_torch(lambda T: T.searchsorted(T.arange(3.0), _x(T), out_int32=int32,
                                           out=T.empty(0, dtype=getattr(T, out_dtype))))
    same_as_torch(lambda T: T.bucketize(_x(T), T.arange(3.0), out_int32=int32,
                                        out=T.empty(0, dtype=getattr(T, out_dtype))))


@pytest.mark.parametrize("out_dtype", ["float32", "int64"])
def test_nonzero_out_dtype(out_dtype):
    same_as_torch(lambda T: T.nonzero(_x(T), out=T.empty(0, dtype=getattr(T, out_dtype))))


def test_out_call_that_fits_no_signature():
    """sum(out=) without dim and argsort(out=) without stable= have no out overload."""
    same_as_torch(lambda T: T.sum(_x(T), out=T.empty(0)))
    same_as_torch(lambda T: T.argsort(_x(T), out=T.empty(0, dtype=T.long)))


@pytest.mark.parametrize("tensors", [
    lambda T: [T.tensor(1.0), T.tensor(2.0)],
    lambda T: [T.tensor([1.0]), T.tensor(2.0)],
    lambda T: [T.ones(2, 2), T.ones(2, 2), T.tensor(3.0)],
    lambda T: [T.empty(0), T.tensor(2.0)],
    lambda T: [T.tensor(2.0)],
])
def test_cat_of_a_zero_dim_tensor_names_its_position(tensors):
    kind, text = same_as_torch(lambda T: T.cat(tensors(T)))
    assert "zero-dimensional" in text


def _warnings_of(call, T):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(T)  # (the line the warning must point at)
    return [(w.category.__name__, str(w.message), os.path.basename(w.filename), w.lineno)
            for w in caught]


DOF_CALLS = {
    "Tensor.var": lambda T: T.tensor([1.0]).var(),
    "Tensor.std": lambda T: T.tensor([1.0, 2.0]).std(correction=2),
    "torch.var dim": lambda T: T.var(T.ones(3, 1), 1),
    "torch.std": lambda T: T.std(T.tensor([4.0])),
}


@pytest.mark.parametrize("call", list(DOF_CALLS.values()), ids=list(DOF_CALLS))
def test_var_std_dof_warning_as_pytorch_gives_it(call):
    """Text with PyTorch's '(Triggered internally at ...)' tail, located at the caller."""
    expected = _warnings_of(call, torch)
    assert expected and "Triggered internally" in expected[0][1]
    assert _warnings_of(call, gt) == expected


def test_out_resize_warning_points_at_the_caller():
    def call(T):
        return T.add(T.ones(2, 3), 1, out=T.ones(2))

    expected = _warnings_of(call, torch)
    assert expected
    assert _warnings_of(call, gt) == expected


THREADS_ENV = [
    {"OMP_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "3"}, {"OMP_NUM_THREADS": "0"},
    {"OMP_NUM_THREADS": "abc"}, {"OMP_NUM_THREADS": "3,1", "MKL_DYNAMIC": "FALSE"},
    {"OMP_NUM_THREADS": "5", "MKL_DYNAMIC": "FALSE"}, {"MKL_NUM_THREADS": "1"},
    {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "2"}, {"MKL_NUM_THREADS": "0"},
    {"MKL_NUM_THREADS": "x"}, {},
]
_PROBE = """
import sys
import numpy as np
T = __import__(sys.argv[1], fromlist=["x"])
n = T.get_num_threads()
a = T.tensor(np.random.default_rng(0).standard_normal(300001).astype(np.float32))
first = a.sum().item()
T.set_num_threads(n)
print(n, first == a.sum().item())
"""


def _probe(module, env):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "MKL_DYNAMIC")}
    clean.update(env)
    done = subprocess.run([sys.executable, "-c", _PROBE, module], env=clean,
                          capture_output=True, text=True, timeout=120, check=True)
    count, same = done.stdout.split()
    return int(count), same


@pytest.mark.parametrize("env", THREADS_ENV, ids=[" ".join(f"{k}={v}" for k, v in e.items())
                                                  or "unset" for e in THREADS_ENV])
def test_get_num_threads_follows_the_environment(env):
    """The count PyTorch reads from the environment; the whole-tensor sum (split by the
    thread count as PyTorch's is) gives the bits set_num_threads(that count) gives."""
    count, same = _probe("gradcli.torch", env)
    assert count == _probe("torch", env)[0]
    assert same == "True"


def test_sum_splits_by_the_environments_thread_count():
    """A sum under OMP_NUM_THREADS=1 is the one-thread sum, not the machine's."""
    code = ("import numpy as np, gradcli.torch as T\n"
            "a = T.tensor(np.random.default_rng(1).standard_normal(400000).astype(np.float32))\n"
            "print(a.sum().item().hex())\n"
            "T.set_num_threads(1); print(a.sum().item().hex())\n"
            "T.set_num_threads(4); print(a.sum().item().hex())\n")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("MKL_NUM_THREADS", None)
    lines = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=120, check=True).stdout.split()
    assert lines[0] == lines[1]
    assert lines[0] != lines[2]  # (four threads add in another order: the test can fail)


F_BAD_CALLS = {
    "relu str": lambda T: T.nn.functional.relu("a"),
    "linear none": lambda T: T.nn.functional.linear(None),
    "linear keyword": lambda T: T.nn.functional.linear(T.ones(2, 2), T.ones(2, 2), foo=1),
    "softmax int": lambda T: T.nn.functional.softmax(3),
    "sigmoid strlist": lambda T: T.nn.functional.sigmoid(["a"]),
    "tanh many": lambda T: T.nn.functional.tanh(T.ones(2), 1),
    "mse_loss keyword": lambda T: T.nn.functional.mse_loss(T.ones(2), T.ones(2), foo=1),
    "log_softmax none": lambda T: T.nn.functional.log_softmax(None),
}


@pytest.mark.parametrize("call", list(F_BAD_CALLS.values()), ids=list(F_BAD_CALLS))
def test_core_functional_names_check_their_arguments(call):
    kind, _ = same_as_torch(call)
    assert kind in ("TypeError", "AttributeError")


def test_core_functional_names_still_compute():
    x = [[0.5, -1.0, 2.0], [3.0, -0.25, 0.0]]
    for call in (lambda T: T.nn.functional.relu(T.tensor(x)),
                 lambda T: T.nn.functional.linear(T.tensor(x), T.tensor(x)),
                 lambda T: T.nn.functional.mse_loss(T.tensor(x), T.tensor(x) * 2),
                 lambda T: T.nn.functional.softmax(T.tensor(x), 1)):
        assert call(gt).flatten().tolist() == pytest.approx(call(torch).flatten().tolist())


def test_linear_out():
    same_as_torch(lambda T: T.nn.functional.linear(T.ones(2, 3), T.ones(4, 3), out=T.empty(0)))


WARNING_CALLS = {
    "F.softmax": lambda T: T.nn.functional.softmax(T.ones(2, 3)),
    "F.log_softmax": lambda T: T.nn.functional.log_softmax(T.ones(2, 3)),
    "F.softmin": lambda T: T.nn.functional.softmin(T.ones(2, 3)),
    "F.mse_loss": lambda T: T.nn.functional.mse_loss(T.ones(2, 3), T.ones(3)),
    "F.l1_loss": lambda T: T.nn.functional.l1_loss(T.ones(2, 3), T.ones(3)),
    "F.mse_loss broadcast": lambda T: T.nn.functional.mse_loss(T.ones(3, 1), T.ones(3)),
}


@pytest.mark.parametrize("call", list(WARNING_CALLS.values()), ids=list(WARNING_CALLS))
def test_functional_warnings_point_at_the_caller(call):
    expected = _warnings_of(call, torch)
    assert expected
    assert _warnings_of(call, gt) == expected


CONSTRUCTION = {
    "str first item": lambda T: T.tensor(["a"]),
    "str later item": lambda T: T.tensor([1, "a"]),
    "str nested first": lambda T: T.tensor([["ab"], [1]]),
    "str with dtype": lambda T: T.tensor(["a"], dtype=T.float32),
    "None with float dtype": lambda T: T.tensor(None, dtype=T.float64),
    "None with int dtype": lambda T: T.tensor(None, dtype=T.int32),
    "new_tensor None": lambda T: T.ones(2).new_tensor(None),
    "new None": lambda T: T.ones(2).new(None),
    "new str": lambda T: T.ones(2).new("a"),
    "new strlist": lambda T: T.ones(2).new(["a"]),
    "as_tensor strlist": lambda T: T.as_tensor(["a", "b"]),
    "sum_to_size": lambda T: T.ones(2, 2).sum_to_size(1, 1, 1),
}


@pytest.mark.parametrize("call", list(CONSTRUCTION.values()), ids=list(CONSTRUCTION))
def test_construction_errors(call):
    kind, _ = same_as_torch(call)
    assert kind != "ok"


def test_from_numpy_arity():
    import numpy as np

    for call in (lambda T: T.from_numpy(np.ones(2), foo=1), lambda T: T.from_numpy(),
                 lambda T: T.from_numpy(np.ones(2), 1), lambda T: T.from_numpy(a=np.ones(2))):
        assert same_as_torch(call)[0] == "TypeError"
    assert gt.from_numpy(np.ones(2)).tolist() == [1.0, 1.0]


ACCEPTED_BEFORE = {
    "clone int": lambda T: T.clone(3),
    "conj str": lambda T: T.conj("a"),
    "x.float(None)": lambda T: T.ones(2).float(None),
    "x.max(None)": lambda T: T.ones(2).max(None),
    "x.view(None)": lambda T: T.ones(2).view(None),
    "x.qr('a')": lambda T: T.ones(2, 2).qr("a"),
    "x.unique('a')": lambda T: T.ones(2).unique("a"),
    "x.unique many": lambda T: T.ones(2).unique(1, 1, 1, 1, 1, 1),
    "zeros_like foo": lambda T: T.zeros_like(T.ones(2), foo=1),
    "random_ foo": lambda T: T.ones(2).random_(foo=1),
    "tile many": lambda T: T.tile(T.ones(2), 1, 2, 3),
    "cartesian_prod int": lambda T: T.cartesian_prod(3),
    "logical_and str": lambda T: T.ones(2).logical_and("a"),
}


@pytest.mark.parametrize("call", list(ACCEPTED_BEFORE.values()), ids=list(ACCEPTED_BEFORE))
def test_bad_arguments_no_longer_accepted(call):
    assert same_as_torch(call)[0] == "TypeError"


GOOD_CALLS = {
    "clone": lambda T: T.clone(T.ones(2)).tolist(),
    "x.max(0)": lambda T: T.ones(2, 3).max(0).values.tolist(),
    "x.view(3, 2)": lambda T: T.arange(6).view(3, 2).tolist(),
    "x.unique(False)": lambda T: T.tensor([2, 1, 2]).unique(True).tolist(),
    "zeros_like dtype": lambda T: str(T.zeros_like(T.ones(2), dtype=T.int32).dtype),
    "random_ 0 5": lambda T: T.zeros(3).random_(0, 1).tolist(),
    "from_numpy": lambda T: T.from_numpy(__import__("numpy").arange(3)).tolist(),
    "conj_physical out": lambda T: T.conj_physical(T.ones(2), out=T.empty(2)).tolist(),
}


@pytest.mark.parametrize("call", list(GOOD_CALLS.values()), ids=list(GOOD_CALLS))
def test_good_calls_are_untouched(call):
    assert call(gt) == call(torch)


# ---- found with PyTorch's OpInfo sample inputs (op_db)
OPINFO_FOUND = {
    "all dim tuple": lambda T: T.all(T.tensor([[1.0, 0.0], [1.0, 1.0]]), dim=(0,)),
    "any dim ()": lambda T: T.any(T.tensor([[1.0, 0.0]]), dim=()),
    "all 0-d dim ()": lambda T: T.all(T.tensor(2.0), dim=()),
    "all keepdim tuple": lambda T: T.all(T.tensor([[1, 0], [1, 1]]), dim=(0, 1), keepdim=True),
    "all uint8": lambda T: T.all(T.tensor([[1, 0], [1, 1]], dtype=T.uint8), dim=(1,)),
    "any uint8 whole": lambda T: T.any(T.tensor([[1, 0], [1, 1]], dtype=T.uint8)),
    "all repeated dim": lambda T: T.all(T.ones(2, 2), dim=(0, -2)),
    "arange int64 truncates": lambda T: T.arange(0.0, -8.000001, -4.0, dtype=T.int64),
    "arange int64 sizes": lambda T: T.arange(0.5, 5.7, 1.5, dtype=T.int64),
    "arange int32 sizes": lambda T: T.arange(0.5, 5.7, 1.5, dtype=T.int32),
    "arange int64 zero step": lambda T: T.arange(0, 5, 0.5, dtype=T.int64),
    "arange int32 zero step": lambda T: T.arange(0, 5, 0.5, dtype=T.int32),
    "arange uint8 wraps": lambda T: T.arange(-3.7, 4.2, 2.9, dtype=T.uint8),
    "trapz ints": lambda T: T.trapz(T.tensor([[1, 2, 4]]), T.tensor([[0, 1, 3]])),
    "trapezoid ints": lambda T: T.trapezoid(T.tensor([1, 2, 4]), dx=2),
    "cumulative_trapezoid ints": lambda T: T.cumulative_trapezoid(T.tensor([1, 2, 4])),
    "trapezoid int y float64 x": lambda T: T.trapezoid(T.tensor([1, 2, 4]),
                                                       T.tensor([0.0, 1.0, 3.0], dtype=T.float64)),
    "trapezoid bool": lambda T: T.trapezoid(T.tensor([True, False])),
    "trapezoid bool x": lambda T: T.trapezoid(T.tensor([1.0, 2.0]), T.tensor([True, False])),
}


@pytest.mark.parametrize("call", list(OPINFO_FOUND.values()), ids=list(OPINFO_FOUND))
def test_opinfo_found_differences(call):
    same_as_torch(call)


INTEGER_INPUTS = {
    "hardtanh int64": lambda T: T.nn.functional.hardtanh(T.tensor([-3, 0, 2, 5]), -1.5, 1.5),
    "hardtanh default": lambda T: T.nn.functional.hardtanh(T.tensor([-3, 0, 2, 5])),
    "hardtanh uint8": lambda T: T.nn.functional.hardtanh(T.tensor([253, 0, 2, 5],
                                                                   dtype=T.uint8), 0, 3.7),
    "hardtanh uint8 negative": lambda T: T.nn.functional.hardtanh(T.tensor([1], dtype=T.uint8)),
    "hardtanh bool": lambda T: T.nn.functional.hardtanh(T.tensor([True])),
    "relu6 int32": lambda T: T.nn.functional.relu6(T.tensor([-3, 0, 2, 7], dtype=T.int32)),
    "hardtanh inplace": lambda T: (lambda x: (T.nn.functional.hardtanh(x, inplace=True), x))(
        T.tensor([-3, 0, 2, 5]))[1],
    "mvlgamma int": lambda T: T.mvlgamma(T.tensor([3, 4, 5]), 2),
    "mvlgamma int32": lambda T: T.mvlgamma(T.tensor([3, 4, 5], dtype=T.int32), 1),
    "mvlgamma bool": lambda T: T.mvlgamma(T.tensor([True, True]), 1),
}


@pytest.mark.parametrize("call", list(INTEGER_INPUTS.values()), ids=list(INTEGER_INPUTS))
def test_integer_inputs_as_pytorch(call):
    same_as_torch(call)


@pytest.mark.parametrize("call", [
    lambda T: T.tensor([9]).index_reduce(0, T.tensor([0]), T.tensor([6]), "amin",
                                         include_self=False),
    lambda T: T.tensor([9, 3]).index_reduce(0, T.tensor([0]), T.tensor([6]), "amax",
                                            include_self=False),
    lambda T: T.tensor([9, 3], dtype=T.uint8).index_reduce(
        0, T.tensor([0, 0]), T.tensor([6, 7], dtype=T.uint8), "amin", include_self=False),
    lambda T: T.tensor([[9, 3], [1, 2]], dtype=T.int32).index_reduce(
        1, T.tensor([1]), T.tensor([[6], [0]], dtype=T.int32), "amax", include_self=False),
])
def test_index_reduce_extremes_of_integers(call):
    same_as_torch(call)


def _m(T):
    return T.tensor([[1, 2], [3, 4]])


@pytest.mark.parametrize("call", [
    lambda T: T.addmv(T.tensor([1, 2]), _m(T), T.tensor([1, 1]), beta=0.2, alpha=0.6),
    lambda T: T.addmv(T.tensor([1, 2]), _m(T), T.tensor([1, 1]), beta=1.7, alpha=2.6),
    lambda T: T.addbmm(_m(T), _m(T)[None], _m(T)[None], beta=0.5, alpha=1.5),
    lambda T: T.baddbmm(_m(T)[None], _m(T)[None], _m(T)[None], beta=1.5, alpha=0.5),
    lambda T: T.addr(_m(T), T.tensor([1, 1]), T.tensor([1, 1]), beta=0.5, alpha=2.5),
    lambda T: T.addr(_m(T), T.tensor([1, 1]), T.tensor([1, 1]), beta=1, alpha=2.5),
    lambda T: T.addmv(T.tensor([1.0, 2.0]), _m(T).float(), T.tensor([1.0, 1.0]), beta=0.2,
                      alpha=0.6),
])
def test_integer_products_with_float_factors(call):
    same_as_torch(call)
