"""Differences the nn/optim composition fuzzer (tests/fuzz/nn_fuzz.py) found, each as a
small case run with gradcli's facade and with PyTorch; PyTorch's text is the golden."""
from __future__ import annotations

import itertools

import pytest

import gradcli.torch as G

torch = pytest.importorskip("torch")


def outcome(fn, lib):
    """What a user sees of fn(lib): its result's shape and dtype, or the error's type and
    text."""
    try:
        y = fn(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).replace("torch.Size", "Size")
    return str(tuple(y.shape)), str(y.dtype).replace("torch.", "")


def same(fn):
    assert outcome(fn, G) == outcome(fn, torch)


# ---------------------------------------------------------------- batch_norm's checks
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("wrong", range(4))
def test_batch_norm_names_the_first_wrong_sized_tensor_in_atens_order(wrong, training):
    """running_mean, running_var, weight, bias: BatchNorm1d(5) fed 3 channels said
    'weight should contain' where PyTorch says 'running_mean should contain'."""
    def fn(lib):
        args = [lib.zeros(5 if i < wrong else 4) for i in range(4)]
        return lib.nn.functional.batch_norm(lib.ones(3, 5), *args, training=training)
    same(fn)


@pytest.mark.parametrize("features,channels", [(3, 2), (5, 7), (4, 1)])
def test_batchnorm_module_with_the_wrong_channel_count(features, channels):
    same(lambda lib: lib.nn.BatchNorm1d(features)(lib.ones(3, channels)))
    same(lambda lib: lib.nn.BatchNorm1d(features).eval()(lib.ones(3, channels)))


@pytest.mark.parametrize("missing", ["mean", "var", "both"])
def test_batch_norm_eval_names_the_missing_running_statistic(missing):
    def fn(lib):
        rm = None if missing in ("mean", "both") else lib.zeros(3)
        rv = None if missing in ("var", "both") else lib.ones(3)
        return lib.nn.functional.batch_norm(lib.ones(2, 3), rm, rv, training=False)
    same(fn)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("mask", [m for m in itertools.product([0, 1, 2], repeat=4)
                                  if any(v == 1 for v in m)])
def test_batch_norm_mixed_parameter_dtypes(x64, mask):
    """ATen's mixed-type rule: the first defined parameter's dtype decides between
    'expect parameter to have scalar type of Float', 'all inputs must share same
    datatype.' and the kernel's 'expected scalar type ... but found ...'."""
    def fn(lib):
        xd, other = (lib.float64, lib.float32) if x64 else (lib.float32, lib.float64)
        args = [None if m == 2 else lib.zeros(3, dtype=other if m else xd) for m in mask]
        return lib.nn.functional.batch_norm(lib.ones(4, 3, dtype=xd), *args, training=True)
    same(fn)


def test_half_input_takes_float_batch_norm_parameters():
    def fn(lib):
        return lib.nn.functional.batch_norm(lib.ones(4, 3).half(), lib.zeros(3), lib.ones(3),
                                            lib.ones(3), lib.zeros(3), training=True)
    same(fn)


@pytest.mark.parametrize("shape", [(1, 4), (1, 0), (1, 3, 1), (2, 3), (1, 2, 2)])
def test_batch_norm_one_value_per_channel(shape):
    same(lambda lib: lib.nn.functional.batch_norm(lib.ones(shape), None, None, training=True))


# ---------------------------------------------------------------- group_norm's check
@pytest.mark.parametrize("shape,groups", [((1, 5), 5), ((1, 5), 1), ((1, 4, 1), 2),
                                          ((2, 4), 4), ((1, 2, 1, 1), 2), ((1, 4, 3), 4),
                                          ((3, 6), 3)])
def test_group_norm_needs_more_than_one_value_per_group(shape, groups):
    """F.group_norm (and nn.GroupNorm, in train and eval mode) refuses a group whose
    statistics come from one value; torch.group_norm (ATen) has no such check. gradcli
    normalised a single value to 0 and trained on, a silent difference."""
    same(lambda lib: lib.nn.functional.group_norm(lib.ones(shape), groups))
    same(lambda lib: lib.nn.GroupNorm(groups, shape[1])(lib.ones(shape)))
    same(lambda lib: lib.nn.GroupNorm(groups, shape[1]).eval()(lib.ones(shape)))
    same(lambda lib: lib.group_norm(lib.ones(shape), groups))


# ---------------------------------------------------------------- module backward hooks
def test_backward_hook_node_prints_as_a_python_function_node():
    """The identity node a full backward hook threads through prints with PyTorch's
    module path (it is a Python autograd.Function there), in grad_fn and next_functions."""
    import re

    def seen(lib):
        m = lib.nn.Linear(2, 2)
        m.register_full_backward_hook(lambda *a: None)
        y = m(lib.ones(1, 2, requires_grad=True))
        text = f"{y.grad_fn} {y.grad_fn.name()} {y.grad_fn.next_functions[0][0].next_functions}"
        return re.sub(r"0x[0-9a-f]+", "0x?", text)
    assert seen(G) == seen(torch)


# ---------------------------------------------------------------- unflatten's message
@pytest.mark.parametrize("sizes", [(4, -1), (-1, 3), (2, 4), (5, -1)])
def test_unflatten_message_shows_the_sizes_as_given(sizes):
    """nn.Unflatten(1, (4, -1)) on 7 features: PyTorch's message shows [4, -1], gradcli
    showed the sizes with -1 already inferred ([4, 1])."""
    same(lambda lib: lib.randn(2, 7).unflatten(1, sizes))
    same(lambda lib: lib.nn.Unflatten(1, sizes)(lib.randn(2, 7)))


# ---------------------------------------------------------------- embedding gradients
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 0}, {"max_norm": 1.0}])
def test_scale_grad_by_freq_divides_each_row_by_its_count(kw):
    """Embedding(..., scale_grad_by_freq=True): each index's gradient is divided by how
    often it occurs in the batch. gradcli ignored the option (row 0 of a batch using it
    three times got three times PyTorch's gradient)."""
    import numpy as np

    def grads(lib):
        lib.manual_seed(0)
        e = lib.nn.Embedding(5, 2, scale_grad_by_freq=True, **kw)
        y = e(lib.tensor([[0, 0, 3], [3, 0, 4]]))
        (y * lib.arange(12.).reshape(2, 3, 2)).pow(2).sum().backward()
        w = lib.randn(5, 2, dtype=lib.float64, requires_grad=True)
        z = lib.nn.functional.embedding(lib.tensor([1, 1, 2]), w, scale_grad_by_freq=True)
        g, = lib.autograd.grad(z.pow(3).sum(), w, create_graph=True)
        g.sum().backward()
        return [np.array(t.tolist()) for t in (e.weight.grad, g, w.grad)]
    for a, b in zip(grads(G), grads(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- prelu's dtypes
@pytest.mark.parametrize("x_dtype,w_dtype", [("float64", "float32"), ("float32", "float64"),
                                             ("float16", "float32"), ("int64", "float32"),
                                             ("float32", "float32"), ("int64", "int64")])
def test_prelu_promotes_no_types(x_dtype, w_dtype):
    """A PReLU made in forward (float32 weight) on a model.double() input: PyTorch refuses
    ('Type promoting not supported'); gradcli promoted and trained on."""
    def fn(lib):
        x = lib.ones(2, 3).to(getattr(lib, x_dtype)) * -1
        return lib.nn.functional.prelu(x, lib.full((1,), 0.25).to(getattr(lib, w_dtype)))
    same(fn)
    same(lambda lib: lib.nn.PReLU()(lib.ones(2, 3).to(getattr(lib, x_dtype))))


# ---------------------------------------------------------------- a matrix of one column
@pytest.mark.parametrize("rows", [1, 3, 5, 9])
def test_matrix_of_one_column_times_a_vector(rows):
    """(m, 1) @ (1,): a float32 matrix-vector product with one column crashed the MKL-order
    emulation (an IndexError, a Python traceback in `gradcli run`); spectral_norm of a
    Linear with one input feature runs one."""
    import numpy as np

    def run(lib):
        lib.manual_seed(0)
        w, v = lib.randn(rows, 1), lib.randn(1)
        m = lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(1, rows))
        return [np.array(t.tolist()) for t in (w @ v, lib.mv(w, v), m.weight,
                                                m(lib.ones(2, 1)).detach())]
    for a, b in zip(run(G), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- transformer fast path
@pytest.mark.parametrize("causal", [False, True])
def test_fused_encoder_layer_takes_a_float32_mask_on_a_double_model(causal):
    """model.double().eval() under no_grad with generate_square_subsequent_mask's float32
    mask: PyTorch's fused layer runs; gradcli raised 'expected scalar type Double but
    found Float'."""
    import numpy as np

    def run(lib):
        lib.manual_seed(0)
        layer = lib.nn.TransformerEncoderLayer(4, 2, dim_feedforward=4, dropout=0.0,
                                               batch_first=True).double().eval()
        e = lib.randn(3, 2, 4, dtype=lib.float64)
        with lib.no_grad():
            y = layer(e, src_mask=lib.nn.Transformer.generate_square_subsequent_mask(2),
                      is_causal=causal)
        return np.array(y.tolist()), str(y.dtype)
    (a, da), (b, db) = run(G), run(torch)
    assert da.replace("torch.", "") == db.replace("torch.", "")
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-9)
