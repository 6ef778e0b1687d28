"""PyTorch's errors at the public boundary beyond the sweep's six kinds of bad argument:
device strings read by the parser, Tensor.type's legacy names, requires_grad_'s bool,
backward's gradients, size/stride's dim, and the functions gradcli.torch defines itself
(is_grad_enabled, get_default_dtype, result_type, promote_types...), each compared with
real PyTorch; good calls still answer as PyTorch does."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import gradcli.torch as gt  # noqa: E402


def outcome(call, T):
    """(type name, message) of call(T), or ("ok", a summary of its result)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(T)
    except Exception as err:  # noqa: BLE001 - the exception is what is compared
        return type(err).__name__, str(err)
    if hasattr(result, "dtype") and hasattr(result, "shape"):
        return "ok", (str(result.dtype), tuple(result.shape))
    return "ok", str(result)


CALLS = {
    # the parser reads a Device argument given as a str or an int before the op runs
    "cuda, unknown device type": lambda T: T.ones(2).cuda("a"),
    "cuda, bad index": lambda T: T.ones(2).cuda("cuda:x"),
    "cuda, negative int": lambda T: T.ones(2).cuda(-1),
    "cuda, int": lambda T: T.ones(2).cuda(0),
    "cuda, keyword device": lambda T: T.ones(2).cuda(device="nowhere"),
    "ones, negative device": lambda T: T.ones(2, device=-1),
    # set_: only a tensor or a storage is a source
    "set_ None": lambda T: T.ones(2).set_(None),
    "set_ str": lambda T: T.ones(2).set_("a"),
    "set_ tensor": lambda T: T.ones(2).set_(T.zeros(3)),
    # Tensor.type reads legacy type names
    "type, unknown name": lambda T: T.ones(2).type("a"),
    "type, short name": lambda T: T.ones(2).type("FloatTensor"),
    "type, dtype name": lambda T: T.ones(2).type("torch.float64"),
    "type, legacy name": lambda T: T.ones(2).type("torch.DoubleTensor"),
    "type, long name": lambda T: T.ones(2).type("torch.LongTensor"),
    "type, torch.Tensor": lambda T: T.ones(2, dtype=T.float64).type("torch.Tensor"),
    "type, legacy class": lambda T: T.ones(2).type(T.DoubleTensor),
    "type, bool class": lambda T: T.ones(2).type(T.BoolTensor),
    "type, Python type": lambda T: T.ones(2).type(float),
    "type, int": lambda T: T.ones(2).type(3),
    "type, list": lambda T: T.ones(2).type(["a"]),
    "type, dtype": lambda T: T.ones(2).type(T.int32),
    "type, none": lambda T: T.ones(2).type(),
    "type, cuda name": lambda T: T.ones(2).type("torch.cuda.FloatTensor"),
    # requires_grad_ takes a bool only
    "requires_grad_ int": lambda T: T.ones(2).requires_grad_(1),
    "requires_grad_ None": lambda T: T.ones(2).requires_grad_(None),
    "requires_grad_ keyword": lambda T: T.ones(2).requires_grad_(requires_grad=True),
    "requires_grad_ False": lambda T: T.ones(2).requires_grad_(False).requires_grad,
    # backward checks its gradients before the graph
    "backward, str gradient": lambda T: T.ones(2).sum().backward("a"),
    "backward, number gradient": lambda T: (T.ones(2, requires_grad=True) * 2).sum().backward(3),
    "backward, list of str": lambda T: T.ones(2).sum().backward(["a"]),
    "backward, numpy scalar": lambda T: T.ones(2).sum().backward(np.float64(1.0)),
    "backward, too many": lambda T: T.ones(2).sum().backward(None, None, False, None, 1),
    "backward, gradient tensor": lambda T: (T.ones(2, requires_grad=True) * 2).backward(
        T.ones(2)),
    # size / stride: a dim that is no int
    "size str": lambda T: T.ones(2, 3).size("a"),
    "size float": lambda T: T.ones(2, 3).size(1.5),
    "size out of range": lambda T: T.ones(2, 3).size(5),
    "size of a 0-d tensor": lambda T: T.tensor(1.0).size(0),
    "size negative": lambda T: T.ones(2, 3).size(-1),
    "stride list": lambda T: T.ones(2, 3).stride([0]),
    "stride out of range": lambda T: T.ones(2, 3).stride(-3),
    "stride": lambda T: T.ones(2, 3).stride(0),
    # the functions the facade defines itself
    "is_grad_enabled()": lambda T: T.is_grad_enabled(),
    "is_grad_enabled(1)": lambda T: T.is_grad_enabled(1),
    "is_grad_enabled(x=1)": lambda T: T.is_grad_enabled(x=1),
    "get_default_dtype(None)": lambda T: T.get_default_dtype(None),
    "get_num_threads(1, 2)": lambda T: T.get_num_threads(1, 2),
    "is_inference_mode_enabled(a=1)": lambda T: T.is_inference_mode_enabled(a=1),
    "result_type tensors": lambda T: T.result_type(T.ones(2), T.ones(2, dtype=T.float64)),
    "result_type keywords": lambda T: T.result_type(tensor=T.ones(2, dtype=T.int64), other=2.5),
    "result_type numbers": lambda T: T.result_type(2, 3.5),
    "result_type numpy number": lambda T: T.result_type(T.ones(2, dtype=T.int32), np.int64(3)),
    "result_type one argument": lambda T: T.result_type(T.ones(2)),
    "result_type None": lambda T: T.result_type(T.ones(2), None),
    "result_type str": lambda T: T.result_type("a", T.ones(2)),
    "promote_types": lambda T: T.promote_types(T.int32, T.float64),
    "promote_types keywords": lambda T: T.promote_types(type1=T.bool, type2=T.int64),
    "promote_types Python types": lambda T: T.promote_types(T.int32, float),
    "promote_types str": lambda T: T.promote_types("a", T.int32),
    "promote_types one": lambda T: T.promote_types(T.int32),
    # PyTorch's Python-level functions: boolean dispatchers name the function the flag chose
    "max_pool2d, flag by keyword": lambda T: T.nn.functional.max_pool2d(
        T.ones(1, 4, 4), 2, return_indices=True, foo=1),
    "max_pool2d, no flag": lambda T: T.nn.functional.max_pool2d(T.ones(1, 4, 4), foo=1),
    "max_pool1d, flag by position": lambda T: T.nn.functional.max_pool1d(
        T.ones(1, 4), 2, 1, 0, 1, False, True, 3),
    "adaptive_max_pool3d, missing size": lambda T: T.nn.functional.adaptive_max_pool3d(
        T.ones(1, 2, 2, 2), return_indices=True),
    "adaptive_max_pool1d, good call": lambda T: T.nn.functional.adaptive_max_pool1d(
        T.ones(1, 4), 2, True)[1],
    "unique, both flags": lambda T: T.unique(T.ones(3), True, True, True, None, 5),
    "unique, inverse only": lambda T: T.unique(T.ones(3), return_inverse=True, zz=1),
    "unique_consecutive, counts": lambda T: T.unique_consecutive(T.ones(3), return_counts=True,
                                                                 zz=1),
    "lu, infos": lambda T: T.lu(T.eye(2), True, True, None, 5),
    "lu, keyword": lambda T: T.lu(T.eye(2), zz=1),
    # *tensors bodies: atleast_Nd hands one argument on alone, meshgrid only a list
    "atleast_1d int": lambda T: T.atleast_1d(3),
    "atleast_2d list": lambda T: T.atleast_2d(["a"]),
    "atleast_3d two": lambda T: T.atleast_3d(T.ones(2), "a"),
    "atleast_1d good": lambda T: T.atleast_1d(T.tensor(2.0)),
    "meshgrid list": lambda T: T.meshgrid(["a"], indexing="ij"),
    "meshgrid int": lambda T: T.meshgrid(3, indexing="ij"),
    # Tensor.lu's pivot goes to _lu_with_info by keyword; Tensor.norm's p to vector_norm
    "Tensor.lu pivot": lambda T: T.eye(2).lu("a"),
    "Tensor.lu pivot keyword": lambda T: T.eye(2).lu(pivot=None),
    "Tensor.lu good": lambda T: T.eye(2).lu(True, get_infos=True)[2],
    "Tensor.lu many": lambda T: T.eye(2).lu(True, True, True),
    "Tensor.norm list": lambda T: T.ones(2).norm([2]),
    "Tensor.norm tuple keyword": lambda T: T.ones(2).norm(p=(2,)),
    "Tensor.norm tensor order": lambda T: T.ones(2).norm(T.tensor(3.0)),
    # bodies read by hand: embedding_bag looks at weight.dtype first, triplet_margin_loss
    # hands its three tensors on to the op
    "embedding_bag, weight no tensor": lambda T: T.nn.functional.embedding_bag(
        T.tensor([[0, 1]]), 3),
    "embedding_bag, weight by keyword": lambda T: T.nn.functional.embedding_bag(
        T.tensor([[0, 1]]), weight=None),
    "triplet_margin_loss, negative": lambda T: T.nn.functional.triplet_margin_loss(
        T.ones(2, 3), T.ones(2, 3), "a"),
    "triplet_margin_loss, good": lambda T: T.nn.functional.triplet_margin_loss(
        T.ones(2, 3), T.zeros(2, 3), T.ones(2, 3), margin=0.5),
    # bodies that hand their leading arguments on to an op: that op's parser words it
    "layer_norm, list input": lambda T: T.nn.functional.layer_norm([T.ones(2)], "x"),
    "layer_norm, float shape": lambda T: T.nn.functional.layer_norm(T.ones(2, 2), 1.5),
    "rrelu, str lower": lambda T: T.nn.functional.rrelu(T.ones(2, 2), "x"),
    "hinge_embedding_loss, list input": lambda T: T.nn.functional.hinge_embedding_loss(
        [T.ones(2)], "x"),
    "layer_norm, wrong shape stays": lambda T: T.nn.functional.layer_norm(T.ones(2, 3), [2]),
    # numpy's objects are named as their C types name themselves; numpy's bool is no bool
    "numpy bool for a bool": lambda T: T.ones(2).requires_grad_(np.True_),
    "numpy float for an int": lambda T: T.cat([T.ones(2)], np.float64(0)),
    "numpy array for a tensor": lambda T: T.ones(2).add(np.ones(2)),
    "numpy array as input": lambda T: T.sin(np.ones(2)),
}


@pytest.mark.parametrize("call", list(CALLS.values()), ids=list(CALLS))
def test_same_outcome_as_pytorch(call):
    assert outcome(call, gt) == outcome(call, torch)


def test_no_argument_functions_still_answer():
    assert gt.is_grad_enabled() is True
    with gt.no_grad():
        assert gt.is_grad_enabled() is False
    assert gt.get_default_dtype() is gt.float32
    assert gt.is_inference_mode_enabled() is False
    with gt.inference_mode():
        assert gt.is_inference_mode_enabled() is True
    assert gt.get_num_threads() == gt.get_num_threads() >= 1


def test_size_and_stride_errors_keep_their_text():
    """A dim that is an int out of range keeps the IndexError it always had."""
    with pytest.raises(IndexError, match="Dimension out of range"):
        gt.ones(2, 3).size(2)
    with pytest.raises(IndexError, match="no dimensions"):
        gt.tensor(1.0).size(0)


def test_every_signature_entry_reads():
    """Each generated entry parses (parser signatures, Python-level stubs, dispatchers
    whose two branches are entries of their own)."""
    from gradcli.engine.ops import arg_checks
    from gradcli.engine.ops.arg_signatures import SIGNATURES

    for name, formats in SIGNATURES.items():
        sigs = arg_checks.signatures_of(name)
        assert sigs, name
        if formats[0] == "!dispatch":
            assert formats[4] in SIGNATURES and formats[5] in SIGNATURES, name
