"""nn.MultiheadAttention and F.multi_head_attention_forward against PyTorch 2.13: seeded
weights bit for bit, outputs and attention weights, shapes, grad_fn chains, gradients of
inputs and parameters, repr and state_dict keys, masks of both kinds, the separate
projection weights, bias_kv / zero attention, dropout, errors, and one `gradcli run`."""

from __future__ import annotations

import numpy as np
import pytest
from process_helpers import assert_runs_as_python_does

import gradcli.torch as gt

torch = pytest.importorskip("torch")


def _names(t, depth: int = 12) -> list:
    """The grad_fn names met walking next_functions breadth-first (a chain's fingerprint)."""
    out, frontier = [], [t.grad_fn]
    for _ in range(depth):
        nxt = []
        for fn in frontier:
            if fn is None:
                continue
            out.append(type(fn).__name__ if not hasattr(fn, "name") else fn.name())
            nxt.extend(f for f, _ in fn.next_functions)
        frontier = nxt
    return out


def _pair(seed, *args, **kwargs):
    torch.manual_seed(seed)
    ours_seed = gt.manual_seed(seed)
    del ours_seed
    theirs = torch.nn.MultiheadAttention(*args, **kwargs)
    ours = gt.nn.MultiheadAttention(*args, **kwargs)
    return ours, theirs


def _both(arr, lib, requires_grad=False):
    return lib.tensor(arr, requires_grad=requires_grad)


def _close(ours, theirs):
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    torch.testing.assert_close(torch.from_numpy(np.array(ours.detach().tolist(),
                                                         dtype=str(theirs.dtype)[6:])),
                               theirs.detach())


RNG = np.random.default_rng(7)
X_SEQ = RNG.standard_normal((3, 2, 4)).astype(np.float32)   # (L, N, E)
X_BF = RNG.standard_normal((2, 3, 4)).astype(np.float32)    # (N, L, E)
MEM = RNG.standard_normal((5, 2, 4)).astype(np.float32)     # (S, N, E)
KEY = RNG.standard_normal((5, 2, 4)).astype(np.float32)
KPM = np.array([[False, True, False], [False, False, True]])
BOOL_MASK = np.array([[False, True, True], [False, False, True], [False, False, False]])
FLOAT_MASK = RNG.standard_normal((3, 3)).astype(np.float32)

CASES = {
    "self seq-first": (dict(), dict(), "self"),
    "self no weights": (dict(), dict(need_weights=False), "self"),
    "self per-head weights": (dict(), dict(average_attn_weights=False), "self"),
    "batch_first": (dict(batch_first=True), dict(), "self_bf"),
    "batch_first no weights": (dict(batch_first=True), dict(need_weights=False), "self_bf"),
    "bool attn_mask": (dict(), dict(attn_mask=BOOL_MASK), "self"),
    "bool attn_mask no weights": (dict(), dict(attn_mask=BOOL_MASK, need_weights=False), "self"),
    "float attn_mask": (dict(), dict(attn_mask=FLOAT_MASK), "self"),
    "3-d attn_mask": (dict(), dict(attn_mask=RNG.standard_normal((4, 3, 3)).astype(np.float32)),
                      "self"),
    "key_padding_mask": (dict(), dict(key_padding_mask=KPM), "self"),
    "key_padding_mask no weights": (dict(), dict(key_padding_mask=KPM, need_weights=False),
                                    "self"),
    "float key_padding_mask": (dict(), dict(key_padding_mask=np.where(KPM, -1.5, 0.0)
                                            .astype(np.float32)), "self"),
    "both masks": (dict(), dict(key_padding_mask=KPM, attn_mask=BOOL_MASK), "self"),
    "causal hint": (dict(), dict(attn_mask=BOOL_MASK, is_causal=True, need_weights=False),
                    "self"),
    "encoder-decoder": (dict(), dict(), "cross"),
    "three tensors": (dict(), dict(), "distinct"),
    "kdim vdim": (dict(kdim=3, vdim=5), dict(), "kv_dims"),
    "no bias": (dict(bias=False), dict(), "self"),
    "bias_kv zero_attn": (dict(add_bias_kv=True, add_zero_attn=True), dict(), "self"),
    "bias_kv zero_attn masks": (dict(add_bias_kv=True, add_zero_attn=True),
                                dict(key_padding_mask=KPM, attn_mask=BOOL_MASK), "self"),
    "unbatched": (dict(), dict(), "unbatched"),
}


def _inputs(kind, lib):
    if kind == "self":
        x = _both(X_SEQ, lib, True)
        return (x, x, x), [x]
    if kind == "self_bf":
        x = _both(X_BF, lib, True)
        return (x, x, x), [x]
    if kind == "cross":
        x, m = _both(X_SEQ, lib, True), _both(MEM, lib, True)
        return (x, m, m), [x, m]
    if kind == "distinct":
        x, k, v = _both(X_SEQ, lib, True), _both(KEY, lib, True), _both(MEM, lib, True)
        return (x, k, v), [x, k, v]
    if kind == "kv_dims":
        x = _both(X_SEQ, lib, True)
        k = _both(KEY[..., :3], lib, True)
        v = _both(np.concatenate([MEM, MEM[..., :1]], -1), lib, True)
        return (x, k, v), [x, k, v]
    x = _both(X_SEQ[:, 0], lib, True)
    return (x, x, x), [x]


def _kw(call, lib):
    return {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in call.items()}


@pytest.mark.parametrize("case", list(CASES))
def test_forward_backward_as_pytorch(case):
    ctor, call, kind = CASES[case]
    ours, theirs = _pair(0, 4, 2, **ctor)
    for (name, p), (tname, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert name == tname
        assert np.array_equal(np.array(p.detach().tolist(), np.float32), tp.detach().numpy())
    (oq, ok, ov), o_leaves = _inputs(kind, gt)
    (tq, tk, tv), t_leaves = _inputs(kind, torch)
    out, w = ours(oq, ok, ov, **_kw(call, gt))
    tout, tw = theirs(tq, tk, tv, **_kw(call, torch))
    _close(out, tout)
    assert _names(out) == _names(tout)
    assert (w is None) == (tw is None)
    if tw is not None:
        _close(w, tw)
        assert _names(w) == _names(tw)
    loss = out.pow(2).sum() + (0 if w is None else (w * w).sum())
    tloss = tout.pow(2).sum() + (0 if tw is None else (tw * tw).sum())
    loss.backward()
    tloss.backward()
    for a, b in zip(o_leaves, t_leaves):
        _close(a.grad, b.grad)
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert (p.grad is None) == (tp.grad is None), name
        if tp.grad is not None:
            _close(p.grad, tp.grad)


def test_repr_state_dict_and_types():
    ours, theirs = _pair(0, 6, 3, add_bias_kv=True)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert str(type(ours)) == str(type(theirs))
    assert str(type(ours.out_proj)) == str(type(theirs.out_proj))
    sep, tsep = _pair(0, 4, 2, kdim=3, vdim=5, bias=False)
    assert repr(sep) == repr(tsep)
    assert list(sep.state_dict()) == list(tsep.state_dict())
    assert [n for n, _ in sep.named_parameters()] == [n for n, _ in tsep.named_parameters()]
    for attr in ("embed_dim", "kdim", "vdim", "num_heads", "head_dim", "batch_first",
                 "_qkv_same_embed_dim", "dropout", "add_zero_attn"):
        assert getattr(sep, attr) == getattr(tsep, attr), attr
    assert sep.in_proj_weight is None and sep.in_proj_bias is None and sep.bias_k is None


@pytest.mark.parametrize("ctor", [dict(), dict(kdim=3, vdim=5), dict(add_bias_kv=True),
                                  dict(dtype="float64")])
def test_seeded_init_is_pytorchs_bit_for_bit(ctor):
    tctor = dict(ctor)
    if "dtype" in ctor:
        ctor = dict(ctor, dtype=gt.float64)
        tctor["dtype"] = torch.float64
    torch.manual_seed(3)
    gt.manual_seed(3)
    theirs = torch.nn.MultiheadAttention(8, 4, **tctor)
    ours = gt.nn.MultiheadAttention(8, 4, **ctor)
    sd, tsd = ours.state_dict(), theirs.state_dict()
    for k in tsd:
        assert np.array_equal(np.array(sd[k].tolist(), dtype=tsd[k].numpy().dtype),
                              tsd[k].numpy()), k
    # the generator is left where PyTorch leaves it
    assert gt.rand(3).tolist() == torch.rand(3).tolist()


def test_dropout_in_training_draws_as_pytorch():
    ours, theirs = _pair(0, 4, 2, dropout=0.5)
    gt.manual_seed(5)
    torch.manual_seed(5)
    x, tx = gt.tensor(X_SEQ), torch.tensor(X_SEQ)
    out, w = ours(x, x, x)
    tout, tw = theirs(tx, tx, tx)
    _close(out, tout)
    _close(w, tw)
    ours.eval()
    theirs.eval()
    _close(ours(x, x, x)[0], theirs(tx, tx, tx)[0])


def test_eval_no_grad_fast_path_values():
    ours, theirs = _pair(1, 4, 2, batch_first=True)
    ours.eval()
    theirs.eval()
    x, tx = gt.tensor(X_BF), torch.tensor(X_BF)
    kpm = np.array([[False, False, True], [False, False, False]])
    with gt.no_grad():
        out, w = ours(x, x, x, key_padding_mask=gt.tensor(kpm))
    with torch.no_grad():
        tout, tw = theirs(tx, tx, tx, key_padding_mask=torch.tensor(kpm))
    _close(out, tout)
    _close(w, tw)
    assert out.grad_fn is None


def test_functional_form_float64():
    rng = np.random.default_rng(1)
    arrays = {n: rng.standard_normal(s) for n, s in (
        ("q", (3, 2, 4)), ("k", (5, 2, 4)), ("v", (5, 2, 4)), ("w", (12, 4)), ("b", (12,)),
        ("ow", (4, 4)), ("ob", (4,)))}

    def run(lib):
        t = {n: lib.tensor(a, requires_grad=True) for n, a in arrays.items()}
        out, w = lib.nn.functional.multi_head_attention_forward(
            t["q"], t["k"], t["v"], 4, 2, t["w"], t["b"], None, None, False, 0.0, t["ow"],
            t["ob"], training=True)
        (out.sum() + w.sum()).backward()
        return out, w, t

    out, w, t = run(gt)
    tout, tw, tt = run(torch)
    _close(out, tout)
    _close(w, tw)
    assert _names(out) == _names(tout)
    for n in arrays:
        _close(t[n].grad, tt[n].grad)


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and text are what is compared
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("bad", [
    lambda L, m, x: L.nn.MultiheadAttention(5, 2),
    lambda L, m, x: L.nn.MultiheadAttention(0, 2),
    lambda L, m, x: m(x, x, x, attn_mask=L.ones(2, 2, dtype=L.bool)),
    lambda L, m, x: m(x, x, x, attn_mask=L.ones(3, 3, dtype=L.int64)),
    lambda L, m, x: m(x, x, x, key_padding_mask=L.zeros(3, dtype=L.bool)),
    lambda L, m, x: m(x, x, x, key_padding_mask=L.zeros(2, 4, dtype=L.bool)),
    lambda L, m, x: m(x[0:1].reshape(2, 2), x, x),
    lambda L, m, x: m(x, x, x, is_causal=True),
    lambda L, m, x: m(x.reshape(3, 2, 2, 2), x, x),
])
def test_errors_as_pytorch(bad):
    ours, theirs = _pair(0, 4, 2)
    got = _error(lambda: bad(gt, ours, gt.tensor(X_SEQ)))
    want = _error(lambda: bad(torch, theirs, torch.tensor(X_SEQ)))
    assert want is not None
    assert got == want


def test_mismatched_mask_types_warn_as_pytorch():
    ours, _ = _pair(0, 4, 2)
    x = gt.tensor(X_SEQ)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        ours(x, x, x, key_padding_mask=gt.tensor(KPM), attn_mask=gt.tensor(FLOAT_MASK))


def test_gradcli_run_as_python(tmp_path):
    program = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "mha = torch.nn.MultiheadAttention(4, 2, batch_first=True)\n"
        "print(mha)\n"
        "x = torch.randn(2, 3, 4, requires_grad=True)\n"
        "mask = torch.tensor([[False, False, True], [False, False, False]])\n"
        "out, w = mha(x, x, x, key_padding_mask=mask)\n"
        "print(out.shape, w.shape, out.grad_fn.name(), w.grad_fn.name(), out.is_contiguous())\n"
        "print(w == 0, torch.round(w.sum(-1), decimals=3))\n"
        "out.sum().backward()\n"
        "print(x.grad.shape, mha.in_proj_weight.grad.shape)\n"
        "print(torch.allclose(x.grad, x.grad))\n"
        "print(sorted(mha.state_dict().keys()))\n")
    assert_runs_as_python_does(tmp_path, program)


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask", ["kpm", "attn", "none"])
def test_fast_path_layout_and_fully_masked_rows(need_weights, mask):
    """Eval mode without grad: PyTorch's fused kernel answers (C-order output, NaN for a
    query row that may attend to nothing)."""
    ours, theirs = _pair(2, 4, 2, batch_first=True)
    ours.eval()
    theirs.eval()
    kpm = np.array([[True, True, True], [False, False, True]])
    am = np.array([[False, True, True], [False, False, True], [False, False, False]])
    kw = {"kpm": {"key_padding_mask": kpm}, "attn": {"attn_mask": am}, "none": {}}[mask]
    x, tx = gt.tensor(X_BF), torch.tensor(X_BF)
    with gt.no_grad():
        out, w = ours(x, x, x, need_weights=need_weights, **_kw(kw, gt))
    with torch.no_grad():
        tout, tw = theirs(tx, tx, tx, need_weights=need_weights, **_kw(kw, torch))
    assert out.stride() == tout.stride()
    torch.testing.assert_close(torch.tensor(out.tolist()), tout, equal_nan=True)
    assert (w is None) == (tw is None)
    if tw is not None:
        torch.testing.assert_close(torch.tensor(w.tolist()), tw, equal_nan=True)


@pytest.mark.parametrize("attack", [
    "torch.nn.functional.multi_head_attention_forward.__globals__",
    "torch.nn.functional.multi_head_attention_forward.__code__",
    "torch.nn.MultiheadAttention(4, 2).forward.__func__.__globals__",
    "torch.nn.MultiheadAttention(4, 2)._takes_fast_path.__globals__",
    "type(torch.nn.MultiheadAttention(4, 2).out_proj).__mro__[1].forward.__globals__",
    "torch.nn.MultiheadAttention(4, 2).__class__.__init__.__globals__",
    "getattr(torch.nn.MultiheadAttention(4, 2), '__dict__')",
    "torch.nn.Transformer.generate_square_subsequent_mask.__globals__",
    "torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2), 1)._nested_path",
    "torch.nn.TransformerEncoderLayer(4, 2).activation.__globals__",
    "torch.nn.TransformerDecoder.__init__.__globals__",
    "type(torch.nn.Transformer(4, 2, 1, 1, 8).encoder).__module__",
])
def test_attacks_stay_in_the_sandbox(tmp_path, attack):
    import subprocess
    import sys

    (tmp_path / "a.grad").write_text(f"import torch\nprint({attack})\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "a.grad"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert got.returncode != 0 and got.stdout == ""
    assert "Traceback" not in got.stderr


# ------------------------------------------------------------- TransformerEncoderLayer

def _layer_pair(seed, *args, **kwargs):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    return (gt.nn.TransformerEncoderLayer(*args, **kwargs),
            torch.nn.TransformerEncoderLayer(*args, **kwargs))


def test_encoder_layer_repr_state_dict_and_seeded_init():
    ours, theirs = _layer_pair(0, 8, 2, dim_feedforward=16)
    assert repr(ours) == repr(theirs)
    assert str(type(ours)) == str(type(theirs))
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)
    for k in tsd:
        assert np.array_equal(np.array(sd[k].tolist(), np.float32), tsd[k].numpy()), k
    assert ours.activation_relu_or_gelu == theirs.activation_relu_or_gelu == 1
    g, tg = _layer_pair(0, 8, 2, activation="gelu", norm_first=True)
    assert g.activation_relu_or_gelu == tg.activation_relu_or_gelu == 2
    m = gt.nn.TransformerEncoderLayer(8, 2, activation=gt.nn.GELU())
    tm = torch.nn.TransformerEncoderLayer(8, 2, activation=torch.nn.GELU())
    assert repr(m) == repr(tm) and m.activation_relu_or_gelu == 2
    assert _error(lambda: gt.nn.TransformerEncoderLayer(8, 2, activation="tanh")) == _error(
        lambda: torch.nn.TransformerEncoderLayer(8, 2, activation="tanh"))


ENC_CASES = {
    "post-norm": (dict(dropout=0.0), dict()),
    "pre-norm gelu batch_first": (dict(dropout=0.0, norm_first=True, activation="gelu",
                                       batch_first=True), dict()),
    "masks": (dict(dropout=0.0), dict(src_mask=BOOL_MASK, src_key_padding_mask=KPM)),
    "dropout": (dict(dropout=0.25), dict()),
    "no bias": (dict(dropout=0.0, bias=False), dict(src_key_padding_mask=KPM)),
}


@pytest.mark.parametrize("case", list(ENC_CASES))
def test_encoder_layer_as_pytorch(case):
    ctor, call = ENC_CASES[case]
    ours, theirs = _layer_pair(0, 4, 2, dim_feedforward=8, **ctor)
    arr = X_BF if ctor.get("batch_first") else X_SEQ
    x, tx = gt.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    gt.manual_seed(9)
    torch.manual_seed(9)
    y = ours(x, **_kw(call, gt))
    ty = theirs(tx, **_kw(call, torch))
    _close(y, ty)
    assert _names(y) == _names(ty)
    weights = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    (y * gt.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    _close(x.grad, tx.grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, tp.grad)
    ours.eval()
    theirs.eval()
    with gt.no_grad():
        y = ours(x, **_kw(call, gt))
    with torch.no_grad():
        ty = theirs(tx, **_kw(call, torch))
    _close(y, ty)


def test_encoder_layer_through_gradcli_run(tmp_path):
    program = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "layer = torch.nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, batch_first=True)\n"
        "print(layer)\n"
        "x = torch.randn(2, 3, 4, requires_grad=True)\n"
        "y = layer(x, src_key_padding_mask=torch.tensor([[False, False, True], [False] * 3]))\n"
        "print(y.shape, y.grad_fn.name())\n"
        "(y * y).sum().backward()\n"
        "print(x.grad.shape, bool((x.grad != 0).all()), torch.round(y.mean(-1), decimals=2).abs())\n"
        "print(type(layer.self_attn), type(layer.self_attn.out_proj))\n")
    assert_runs_as_python_does(tmp_path, program)


# ------------------------------------------------------------------ TransformerEncoder

def _encoder_pair(seed, layer_kwargs, **kwargs):
    torch.manual_seed(seed)
    gt.manual_seed(seed)
    ours = gt.nn.TransformerEncoder(gt.nn.TransformerEncoderLayer(4, 2, **layer_kwargs), 2,
                                    **kwargs)
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, **layer_kwargs),
                                         2, **kwargs)
    return ours, theirs


def test_encoder_repr_keys_and_construction_warning():
    with pytest.warns(UserWarning, match=r"enable_nested_tensor is True, but "
                      r"self.use_nested_tensor is False because encoder_layer.self_attn."
                      r"batch_first was not True\(use batch_first"):
        ours, theirs = _encoder_pair(0, dict(dim_feedforward=8))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        assert np.array_equal(np.array(ours.state_dict()[k].tolist(), np.float32), v.numpy())
    assert ours.use_nested_tensor is theirs.use_nested_tensor is False
    ok, tok = _encoder_pair(0, dict(dim_feedforward=8, batch_first=True))
    assert ok.use_nested_tensor is tok.use_nested_tensor is True


CAUSAL = np.triu(np.full((3, 3), -np.inf, dtype=np.float32), 1)
ENCODER_CASES = {
    "plain": (dict(dim_feedforward=8, dropout=0.0), {}),
    "causal mask": (dict(dim_feedforward=8, dropout=0.0), dict(mask=CAUSAL)),
    "padding batch_first": (dict(dim_feedforward=8, dropout=0.0, batch_first=True),
                            dict(src_key_padding_mask=KPM)),
}


@pytest.mark.parametrize("case", list(ENCODER_CASES))
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_encoder_as_pytorch(case):
    layer_kwargs, call = ENCODER_CASES[case]
    ours, theirs = _encoder_pair(0, layer_kwargs, norm=None)
    arr = X_BF if layer_kwargs.get("batch_first") else X_SEQ
    x, tx = gt.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    y, ty = ours(x, **_kw(call, gt)), theirs(tx, **_kw(call, torch))
    _close(y, ty)
    assert _names(y) == _names(ty)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    _close(x.grad, tx.grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, tp.grad)


@pytest.mark.parametrize("kpm", [[[False, False, True], [False, False, False]],
                                 [[False, True, False], [False, False, False]]])
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_encoder_eval_nested_path_zeroes_padding(kpm):
    """Eval without grad and a left-aligned padding mask: PyTorch's nested-tensor path
    pads its result with zeros (a mask that is not left-aligned keeps the dense path)."""
    norm = dict(norm=None)
    ours, theirs = _encoder_pair(0, dict(dim_feedforward=8, batch_first=True), **norm)
    ours.eval()
    theirs.eval()
    x, tx = gt.tensor(X_BF), torch.tensor(X_BF)
    with gt.no_grad():
        y = ours(x, src_key_padding_mask=gt.tensor(kpm))
    with torch.no_grad():
        ty = theirs(tx, src_key_padding_mask=torch.tensor(kpm))
    _close(y, ty)


# ------------------------------------------------------- TransformerDecoder(Layer)

DECODER_CASES = {
    "post-norm causal": (dict(dim_feedforward=8, dropout=0.0),
                         dict(tgt_mask=CAUSAL,
                              memory_key_padding_mask=np.array([[False] * 4 + [True],
                                                                [False] * 5]))),
    "pre-norm gelu batch_first": (dict(dim_feedforward=8, dropout=0.0, norm_first=True,
                                       activation="gelu", batch_first=True),
                                  dict(tgt_key_padding_mask=KPM)),
    "bool causal mask, dropout": (dict(dim_feedforward=8, dropout=0.2),
                                  dict(tgt_mask=BOOL_MASK)),
}


@pytest.mark.parametrize("case", list(DECODER_CASES))
def test_decoder_as_pytorch(case):
    layer_kwargs, call = DECODER_CASES[case]
    torch.manual_seed(0)
    gt.manual_seed(0)
    ours = gt.nn.TransformerDecoder(gt.nn.TransformerDecoderLayer(4, 2, **layer_kwargs), 2,
                                    norm=gt.nn.LayerNorm(4))
    theirs = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(4, 2, **layer_kwargs),
                                         2, norm=torch.nn.LayerNorm(4))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        assert np.array_equal(np.array(ours.state_dict()[k].tolist(), np.float32), v.numpy())
    bf = layer_kwargs.get("batch_first", False)
    tgt_arr = X_BF if bf else X_SEQ
    mem_arr = MEM.transpose(1, 0, 2).copy() if bf else MEM
    t, m = gt.tensor(tgt_arr, requires_grad=True), gt.tensor(mem_arr, requires_grad=True)
    tt, tm = torch.tensor(tgt_arr, requires_grad=True), torch.tensor(mem_arr, requires_grad=True)
    gt.manual_seed(4)
    torch.manual_seed(4)
    y, ty = ours(t, m, **_kw(call, gt)), theirs(tt, tm, **_kw(call, torch))
    _close(y, ty)
    assert _names(y) == _names(ty)
    weights = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    (y * gt.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    _close(t.grad, tt.grad)
    _close(m.grad, tm.grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, tp.grad)


# ------------------------------------------------------------------------ Transformer

@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("batch_first", [True, False])
def test_transformer_as_pytorch(batch_first):
    kwargs = dict(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=2,
                  dim_feedforward=8, dropout=0.0, batch_first=batch_first)
    torch.manual_seed(0)
    gt.manual_seed(0)
    ours, theirs = gt.nn.Transformer(**kwargs), torch.nn.Transformer(**kwargs)
    assert repr(ours) == repr(theirs)
    for k, v in theirs.state_dict().items():
        assert np.array_equal(np.array(ours.state_dict()[k].tolist(), np.float32), v.numpy()), k
    assert list(ours.state_dict()) == list(theirs.state_dict())
    mask = gt.nn.Transformer.generate_square_subsequent_mask(3)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.tolist() == tmask.tolist() and str(mask.dtype) == str(tmask.dtype)
    src_arr = MEM.transpose(1, 0, 2).copy() if batch_first else MEM
    tgt_arr = X_BF if batch_first else X_SEQ
    s, t = gt.tensor(src_arr, requires_grad=True), gt.tensor(tgt_arr, requires_grad=True)
    ts, tt = torch.tensor(src_arr, requires_grad=True), torch.tensor(tgt_arr, requires_grad=True)
    y, ty = ours(s, t, tgt_mask=mask), theirs(ts, tt, tgt_mask=tmask)
    _close(y, ty)
    assert _names(y) == _names(ty)
    weights = RNG.standard_normal(tuple(ty.shape)).astype(np.float32)
    (y * gt.tensor(weights)).sum().backward()
    (ty * torch.tensor(weights)).sum().backward()
    _close(s.grad, ts.grad)
    _close(t.grad, tt.grad)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        _close(p.grad, tp.grad)
    narrow = (lambda L, x: x[:1]) if batch_first else (lambda L, x: x[:, :1])
    assert _error(lambda: ours(s, narrow(gt, t))) == _error(lambda: theirs(ts, narrow(torch, tt)))
    assert _error(lambda: ours(s[..., :2], t)) == _error(lambda: theirs(ts[..., :2], tt))


# ------------------------------------------- the math attention path's _safe_softmax

def _chain(t):
    out, fn = [], t.grad_fn
    while fn is not None:
        out.append(fn.name())
        fn = fn.next_functions[0][0] if fn.next_functions else None
    return out


def test_math_attention_with_dropout_masks_whole_rows_to_zero():
    """With dropout the CPU attention is ATen's math path: _safe_softmax (a fully masked
    row attends to nothing: 0, not NaN) and q, k scaled by mul.Scalar (MulBackward1)."""
    rng = np.random.default_rng(3)
    q_np = rng.standard_normal((2, 2, 3, 2)).astype(np.float32)
    mask = np.zeros((2, 2, 1, 3), np.float32)
    mask[0] = -np.inf
    outs = []
    for lib in (gt, torch):
        lib.manual_seed(0)
        q = lib.tensor(q_np, requires_grad=True)
        o = lib.nn.functional.scaled_dot_product_attention(q, q, q, lib.tensor(mask),
                                                           dropout_p=0.1)
        o.sum().backward()
        outs.append((o, q.grad, _chain(o)))
    (o, g, names), (to, tg, tnames) = outs
    _close(o, to)
    _close(g, tg)
    assert names == tnames
    assert "SafeSoftmaxBackward0" in names


def test_safe_softmax_as_pytorch():
    x = np.array([[1.0, 2.0, -np.inf], [-np.inf, -np.inf, -np.inf]], np.float32)
    a, ta = gt.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    y, ty = gt._safe_softmax(a * 1, -1), torch._safe_softmax(ta * 1, -1)
    _close(y, ty)
    assert y.grad_fn.name() == ty.grad_fn.name()
    w = np.array([[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]], np.float32)
    (y * gt.tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    _close(a.grad, ta.grad)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("batch_first", [True, False])
def test_encoder_layer_fused_path_fully_padded_rows(batch_first):
    """Eval without grad: PyTorch's fused encoder-layer kernel makes a sequence with every
    key padded NaN (the composed path, in training, gives numbers)."""
    ours, theirs = _layer_pair(0, 4, 2, dim_feedforward=8, batch_first=batch_first)
    kpm = np.array([[True, True, True], [False, False, True]])
    arr = X_BF if batch_first else X_SEQ
    x, tx = gt.tensor(arr), torch.tensor(arr)
    for mode in ("eval", "train"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        gt.manual_seed(1)
        torch.manual_seed(1)
        with gt.no_grad():
            y = ours(x, src_key_padding_mask=gt.tensor(kpm))
        with torch.no_grad():
            ty = theirs(tx, src_key_padding_mask=torch.tensor(kpm))
        torch.testing.assert_close(torch.tensor(y.tolist()), ty, equal_nan=True)
