"""Differential fuzzing of nn / optim / user classes against PyTorch 2.13.

:func:`program` writes a random, well-formed training program: ``torch.manual_seed``,
a model built from random layers (Linear, Conv1d/2d, pooling, BatchNorm/LayerNorm/
GroupNorm, Dropout, Embedding, RNN/LSTM/GRU, activations, Flatten/Unflatten) held in a
Sequential, a ModuleList, a ModuleDict or a user subclass with its own forward, a buffer,
a parameter and possibly tied weights; a loss with random options, an optimizer with
random options and param groups, a scheduler; a few training steps (zero_grad, backward,
clip_grad_norm_, step) and prints of losses, parameters, gradients, state_dict keys and
shapes, the optimizer's param groups and state, the module repr, hook logs, eval passes
under no_grad and frozen parameters.

The same text runs three ways: real torch (:func:`run_torch`), gradcli's facade as plain
Python with ``torch`` bound to ``gradcli.torch`` (:func:`run_facade`) and the gradcli
language (:func:`run_language`); stdout must agree (``difflib_torch.compare``: exact
text, or numbers that differ only beyond float32 printing noise, reported as 'close').

:func:`error_program` writes the programs of the error paths (a class with a bad
forward, wrong shapes into layers, an optimizer given a non-leaf, bad optimizer and
scheduler arguments); :func:`check_error_report` says what is wrong with gradcli's report
of one (it must carry PyTorch's text, a file:line:col location and a caret, exit non-zero,
no Python traceback).

A generator takes a chooser (``.pick(seq)``, ``.int(lo, hi)``, ``.coin(p)``): hypothesis'
``draw`` in the suite (:func:`programs`), ``random.Random`` for the long runs
(tests/fuzz/nn_fuzz_run.py).
"""
from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import random
import re
import sys
import warnings
from pathlib import Path

from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
import difflib_torch as D  # noqa: E402

from gradcli.lang import Limits  # noqa: E402
from gradcli.lang.session import run_source  # noqa: E402


class RandomChooser:
    """Choices from a seeded ``random.Random`` (the long runs)."""

    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, seq):
        seq = list(seq)
        return seq[self.r.randrange(len(seq))]

    def int(self, lo, hi):
        return self.r.randint(lo, hi)

    def coin(self, p=0.5):
        return self.r.random() < p


class DrawChooser:
    """Choices through hypothesis' ``draw`` (the suite: derandomized, shrinkable)."""

    def __init__(self, draw):
        self.draw = draw

    def pick(self, seq):
        return self.draw(st.sampled_from(list(seq)))

    def int(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def coin(self, p=0.5):
        return self.draw(st.integers(0, 999)) < int(p * 1000)


ACTIVATIONS = [
    "nn.ReLU()", "nn.Tanh()", "nn.Sigmoid()", "nn.GELU()", "nn.GELU(approximate='tanh')",
    "nn.LeakyReLU(0.2)", "nn.ELU(alpha=0.5)", "nn.SiLU()", "nn.Softplus(beta=2.0)",
    "nn.Hardtanh(-0.5, 0.5)", "nn.PReLU()", "nn.Mish()", "nn.Softsign()", "nn.CELU()",
    "nn.SELU()", "nn.Hardswish()", "nn.ReLU6()", "nn.LogSigmoid()", "nn.Tanhshrink()",
    "nn.Hardsigmoid()", "nn.Identity()",
]


def _act(c):
    return c.pick(ACTIVATIONS)


def _f(c, lo, hi, digits=2):
    """A float literal in [lo, hi] with few digits (reproducible text)."""
    steps = 10 ** digits
    return repr(round(lo + (hi - lo) * c.int(0, steps) / steps, digits))


# ------------------------------------------------------------------ model bodies
def _mlp(c, n, width):
    """Layers on (N, F) features; returns (layer texts, final width)."""
    layers, f = [], width
    for _ in range(c.int(1, 4)):
        kind = c.pick(["linear", "linear", "act", "act", "dropout", "layernorm", "batchnorm",
                       "groupnorm", "identity"])
        if kind == "linear":
            h = c.int(2, 6)
            layers.append(f"nn.Linear({f}, {h}{'' if c.coin(0.8) else ', bias=False'})")
            f = h
        elif kind == "act":
            layers.append(_act(c))
        elif kind == "dropout":
            layers.append(f"nn.Dropout({c.pick(['0.0', '0.2', '0.5'])})")
        elif kind == "layernorm":
            opt = c.pick(["", ", elementwise_affine=False", ", eps=1e-3", ", bias=False"])
            layers.append(f"nn.LayerNorm({f}{opt})")
        elif kind == "batchnorm" and n > 1:
            opt = c.pick(["", ", momentum=0.5", ", affine=False", ", track_running_stats=False",
                          ", eps=1e-3"])
            layers.append(f"nn.BatchNorm1d({f}{opt})")
        elif kind == "groupnorm":
            g = c.pick([d for d in range(1, f + 1) if f % d == 0])
            layers.append(f"nn.GroupNorm({g}, {f}{'' if c.coin() else ', affine=False'})")
        else:
            layers.append("nn.Identity()")
    return layers, f


def _conv(c, n, dims, ch, size):
    """Layers on (N, C, L) or (N, C, H, W), ending flat; returns (layers, features)."""
    d = "1d" if dims == 1 else "2d"
    layers = []
    for _ in range(c.int(1, 3)):
        kind = c.pick(["conv", "conv", "pool", "norm", "act", "dropout", "tconv"])
        if kind == "tconv":
            out = c.int(1, 3)
            k = c.int(1, 3)
            stride = c.pick([1, 2])
            opad = c.pick([0, 1]) if stride == 2 else 0
            layers.append(f"nn.ConvTranspose{d}({ch}, {out}, {k}, stride={stride}"
                          f"{f', output_padding={opad}' if opad else ''})")
            ch, size = out, (size - 1) * stride + k + opad
        elif kind == "conv":
            out = c.int(1, 4)
            k = c.int(1, min(3, size))
            stride = c.pick([1, 1, 2])
            pad = c.pick([0, 0, 1]) if k > 1 else 0
            groups = c.pick([g for g in (1, 2) if ch % g == 0 and out % g == 0])
            opts = f"{ch}, {out}, {k}"
            if stride != 1:
                opts += f", stride={stride}"
            if pad:
                opts += f", padding={pad}"
                if c.coin(0.3):
                    opts += f", padding_mode={c.pick(['reflect', 'replicate', 'circular'])!r}"
            if groups != 1:
                opts += f", groups={groups}"
            dil = 2 if k > 1 and c.coin(0.2) else 1
            if dil != 1:
                opts += f", dilation={dil}"
            if c.coin(0.2):
                opts += ", bias=False"
            new = (size + 2 * pad - dil * (k - 1) - 1) // stride + 1
            if new < 1:
                continue
            layers.append(f"nn.Conv{d}({opts})")
            ch, size = out, new
        elif kind == "pool" and size >= 2:
            p = c.pick(["Max", "Avg"])
            ceil = c.coin(0.3)
            layers.append(f"nn.{p}Pool{d}(2{', ceil_mode=True' if ceil else ''})")
            size = -(-size // 2) if ceil else size // 2
        elif kind == "norm":
            which = c.pick(["batch", "group", "instance"])
            if which == "batch" and n > 1:
                opt = c.pick(["", ", momentum=0.3", ", affine=False"])
                layers.append(f"nn.BatchNorm{d}({ch}{opt})")
            elif which == "group":
                g = c.pick([x for x in range(1, ch + 1) if ch % x == 0])
                layers.append(f"nn.GroupNorm({g}, {ch})")
            elif size > 1:
                layers.append(f"nn.InstanceNorm{d}({ch}{', affine=True' if c.coin() else ''})")
        elif kind == "act":
            layers.append(_act(c))
        else:
            layers.append(c.pick(["nn.Dropout(0.3)", f"nn.Dropout{d}(0.5)" if dims == 2
                                  else "nn.Dropout1d(0.5)"]))
    if c.coin(0.3):
        layers.append(f"nn.AdaptiveAvgPool{d}(1)")
        size = 1
    layers.append("nn.Flatten()")
    return layers, ch * size ** dims


# ------------------------------------------------------------------ the program
LOSSES = ["ce", "ce", "nll", "mse", "l1", "smoothl1", "huber", "bcelogits", "bce", "kldiv",
          "multimargin", "softmargin", "multilabelsoft", "poisson", "gaussian"]


def _loss(c, k):
    """(setup lines, expression of the loss from `out` and `target`, target line)."""
    red = c.pick(["'mean'", "'mean'", "'sum'", "'none'"])
    functional = c.coin(0.4)
    setup, tgt = [], ""
    name = c.pick(LOSSES)
    tail = ".mean()" if red == "'none'" and c.coin() else (".sum()" if red == "'none'" else "")
    if name in ("ce", "nll"):
        opts = [f"reduction={red}"]
        hard = name == "nll" or c.coin(0.7)
        if c.coin(0.3):
            setup.append(f"cw = torch.rand({k}) + 0.5")
            opts.append("weight=cw")
        if hard:
            tgt = f"target = torch.randint(0, {k}, (N,))"
            if c.coin(0.3):
                setup.append("")
                tgt += "\ntarget[0] = -100" if c.coin() else "\ntarget[0] = 1"
                opts.append(c.pick(["ignore_index=-100", "ignore_index=1"]))
        else:
            tgt = f"target = torch.randn(N, {k}).softmax(dim=1)"
        if name == "ce" and c.coin(0.4):
            opts.append(f"label_smoothing={_f(c, 0, 0.3)}")
        inp = "out" if name == "ce" else "F.log_softmax(out, dim=1)"
        fn = "cross_entropy" if name == "ce" else "nll_loss"
        mod = "CrossEntropyLoss" if name == "ce" else "NLLLoss"
    elif name in ("mse", "l1", "smoothl1", "huber"):
        tgt = f"target = torch.randn(N, {k})"
        opts = [f"reduction={red}"]
        if name == "smoothl1" and c.coin():
            opts.append(f"beta={_f(c, 0.1, 2)}")
        if name == "huber" and c.coin():
            opts.append(f"delta={_f(c, 0.1, 2)}")
        inp = "out"
        fn, mod = {"mse": ("mse_loss", "MSELoss"), "l1": ("l1_loss", "L1Loss"),
                   "smoothl1": ("smooth_l1_loss", "SmoothL1Loss"),
                   "huber": ("huber_loss", "HuberLoss")}[name]
    elif name in ("bcelogits", "bce"):
        tgt = f"target = torch.randint(0, 2, (N, {k})).float()" if c.coin() else \
            f"target = torch.rand(N, {k})"
        opts = [f"reduction={red}"]
        if c.coin(0.3):
            setup.append(f"bw = torch.rand({k}) + 0.5")
            opts.append("weight=bw")
        if name == "bcelogits" and c.coin(0.4):
            setup.append(f"pw = torch.rand({k}) * 2")
            opts.append("pos_weight=pw")
        inp = "out" if name == "bcelogits" else "torch.sigmoid(out)"
        fn, mod = ("binary_cross_entropy_with_logits", "BCEWithLogitsLoss") \
            if name == "bcelogits" else ("binary_cross_entropy", "BCELoss")
    elif name == "kldiv":
        log_t = c.coin(0.3)
        red = c.pick(["'batchmean'", "'sum'", "'mean'", "'none'"])
        tail = ".sum()" if red == "'none'" else ""
        tgt = f"target = torch.randn(N, {k}).{'log_softmax' if log_t else 'softmax'}(dim=1)"
        opts = [f"reduction={red}"] + (["log_target=True"] if log_t else [])
        inp, fn, mod = "F.log_softmax(out, dim=1)", "kl_div", "KLDivLoss"
    elif name == "multimargin":
        tgt = f"target = torch.randint(0, {k}, (N,))"
        opts = [f"reduction={red}"] + ([f"margin={_f(c, 0.5, 2)}"] if c.coin() else []) \
            + (["p=2"] if c.coin(0.3) else [])
        inp, fn, mod = "out", "multi_margin_loss", "MultiMarginLoss"
    elif name == "softmargin":
        tgt = f"target = torch.randint(0, 2, (N, {k})).float() * 2 - 1"
        opts = [f"reduction={red}"]
        inp, fn, mod = "out", "soft_margin_loss", "SoftMarginLoss"
    elif name == "multilabelsoft":
        tgt = f"target = torch.randint(0, 2, (N, {k})).float()"
        opts = [f"reduction={red}"]
        inp, fn, mod = "out", "multilabel_soft_margin_loss", "MultiLabelSoftMarginLoss"
    elif name == "poisson":
        tgt = f"target = torch.poisson(torch.rand(N, {k}) * 3)"
        opts = [f"reduction={red}"] + (["log_input=False"] if c.coin(0.3) else []) \
            + (["full=True"] if c.coin(0.3) else [])
        inp = "out" if "log_input=False" not in opts else "out.exp()"
        fn, mod = "poisson_nll_loss", "PoissonNLLLoss"
    else:
        tgt = f"target = torch.randn(N, {k})\nvar = torch.rand(N, {k}) + 0.1"
        opts = [f"reduction={red}"] + (["full=True"] if c.coin(0.3) else [])
        if functional:
            return setup, f"F.gaussian_nll_loss(out, target, var, {', '.join(opts)}){tail}", tgt
        setup.append(f"crit = nn.GaussianNLLLoss({', '.join(opts)})")
        return setup, f"crit(out, target, var){tail}", tgt
    if functional:
        return setup, f"F.{fn}({inp}, target, {', '.join(opts)}){tail}", tgt
    setup.append(f"crit = nn.{mod}({', '.join(opts)})")
    return setup, f"crit({inp}, target){tail}", tgt


OPTIMIZERS = {
    "SGD": lambda c: ["lr=0.1"] + c.pick([[], ["momentum=0.9"], ["momentum=0.9", "nesterov=True"],
                                          ["momentum=0.5", "dampening=0.1"]])
    + (["weight_decay=0.01"] if c.coin(0.3) else []) + (["maximize=True"] if c.coin(0.1) else []),
    "Adam": lambda c: [f"lr={c.pick(['0.01', '0.001', '0.05'])}"]
    + (["amsgrad=True"] if c.coin(0.3) else []) + (["weight_decay=0.1"] if c.coin(0.3) else [])
    + (["betas=(0.8, 0.99)"] if c.coin(0.3) else []) + (["eps=1e-6"] if c.coin(0.2) else []),
    "AdamW": lambda c: ["lr=0.01"] + (["amsgrad=True"] if c.coin(0.3) else [])
    + (["weight_decay=0.5"] if c.coin(0.5) else []),
    "RMSprop": lambda c: ["lr=0.01"] + (["momentum=0.9"] if c.coin(0.4) else [])
    + (["centered=True"] if c.coin(0.4) else []) + (["alpha=0.9"] if c.coin(0.3) else [])
    + (["weight_decay=0.1"] if c.coin(0.2) else []),
    "Adagrad": lambda c: ["lr=0.1"] + (["lr_decay=0.01"] if c.coin(0.4) else [])
    + (["initial_accumulator_value=0.1"] if c.coin(0.4) else [])
    + (["weight_decay=0.1"] if c.coin(0.2) else []),
    "Adadelta": lambda c: [c.pick(["lr=1.0", "lr=0.5"])] + (["rho=0.8"] if c.coin(0.3) else []),
    "Adamax": lambda c: ["lr=0.02"] + (["weight_decay=0.1"] if c.coin(0.3) else []),
    "NAdam": lambda c: ["lr=0.01"] + (["momentum_decay=0.005"] if c.coin(0.3) else [])
    + (["decoupled_weight_decay=True", "weight_decay=0.1"] if c.coin(0.3) else []),
    "RAdam": lambda c: ["lr=0.01"] + (["decoupled_weight_decay=True", "weight_decay=0.1"]
                                      if c.coin(0.3) else []),
    "ASGD": lambda c: ["lr=0.05"] + (["t0=1.0"] if c.coin(0.3) else []),
    "Rprop": lambda c: ["lr=0.01"] + (["etas=(0.4, 1.3)"] if c.coin(0.3) else []),
    "Adafactor": lambda c: ["lr=0.01"] + (["weight_decay=0.1"] if c.coin(0.3) else []),
    "LBFGS": lambda c: ["lr=0.5", f"max_iter={c.int(1, 4)}"]
    + (["line_search_fn='strong_wolfe'"] if c.coin(0.3) else []),
}

INITS = ["xavier_uniform_(m.weight)", "xavier_normal_(m.weight, gain=0.5)",
         "kaiming_uniform_(m.weight, a=0.1)", "kaiming_normal_(m.weight, nonlinearity='relu')",
         "kaiming_normal_(m.weight, mode='fan_out')", "orthogonal_(m.weight)",
         "trunc_normal_(m.weight, std=0.1)", "normal_(m.weight, 0.0, 0.2)",
         "uniform_(m.weight, -0.3, 0.3)", "sparse_(m.weight, 0.5) if m.weight.dim() == 2 else None",
         "eye_(m.weight) if m.weight.dim() == 2 else nn.init.dirac_(m.weight)"]

SCHEDULERS = [
    None, None,
    "torch.optim.lr_scheduler.StepLR(opt, step_size={a}, gamma=0.5)",
    "torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.3)",
    "torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)",
    "torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max={a}, eta_min=0.001)",
    "torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (e + 1))",
    "torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters={a})",
    "torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters={a})",
    "torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0)",
    "torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0={a}, T_mult=2)",
    "torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)",
    "torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)",
    "torch.optim.lr_scheduler.SequentialLR(opt, [torch.optim.lr_scheduler.ConstantLR(opt, "
    "factor=0.5, total_iters=1), torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.8)], "
    "milestones=[{a}])",
    "torch.optim.lr_scheduler.ChainedScheduler([torch.optim.lr_scheduler.ConstantLR(opt, "
    "factor=0.5, total_iters={a}), torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)])",
    "torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.001, max_lr=0.05, step_size_up={a}, "
    "cycle_momentum=False)",
    "torch.optim.lr_scheduler.MultiplicativeLR(opt, lambda e: 0.95)",
]


def program(c) -> str:
    """One random training program (valid Python and valid gradcli)."""
    seed = c.int(0, 2**16)
    n = c.int(1, 4)
    k = c.int(2, 4)
    kind = c.pick(["mlp", "mlp", "conv1d", "conv2d", "seq"])
    container = c.pick(["seq", "list", "dict", "class"]) if kind != "seq" else "class"
    lines = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F",
             f"torch.manual_seed({seed})", f"N = {n}", "log = []"]
    # ---- the data
    if kind == "mlp":
        width = c.int(2, 5)
        x = f"x = torch.randn(N, {width})"
        body, feat = _mlp(c, n, width)
    elif kind in ("conv1d", "conv2d"):
        dims = 1 if kind == "conv1d" else 2
        ch = c.int(1, 3)
        size = c.int(3, 7 if dims == 1 else 5)
        x = f"x = torch.randn(N, {ch}, {', '.join([str(size)] * dims)})"
        if c.coin(0.15):  # flat input unflattened by the model
            x = f"x = torch.randn(N, {ch * size ** dims})"
            unflat = f"nn.Unflatten(1, ({ch}, {', '.join([str(size)] * dims)}))"
        else:
            unflat = None
        body, feat = _conv(c, n, dims, ch, size)
        if unflat:
            body.insert(0, unflat)
    else:
        vocab, emb = c.int(4, 8), c.int(2, 5)
        t = c.int(1, 4)
        x = f"x = torch.randint(0, {vocab}, (N, {t}))"
    # ---- the model
    tie = False
    if kind == "seq":
        rnn = c.pick(["RNN", "LSTM", "GRU"])
        hid = c.int(2, 4)
        layers_ = c.int(1, 2)
        bf = c.coin()
        bi = c.coin(0.4)
        ropts = [f"{emb}", f"{hid}"]
        if layers_ > 1:
            ropts.append(f"num_layers={layers_}")
            if c.coin(0.3):
                ropts.append("dropout=0.5")
        if bf:
            ropts.append("batch_first=True")
        if bi:
            ropts.append("bidirectional=True")
        if rnn == "RNN" and c.coin(0.3):
            ropts.append("nonlinearity='relu'")
        if c.coin(0.15):
            ropts.append("bias=False")
        proj = rnn == "LSTM" and c.coin(0.25)
        if proj:
            ropts.append("proj_size=1")
        h0 = c.coin(0.3)
        dirs = 2 if bi else 1
        tie = c.coin(0.4)
        pad = c.coin(0.3)
        k = vocab if tie else k
        take = c.pick(["last", "mean", "hidden"])
        tf = c.coin(0.3)  # a TransformerEncoderLayer in the RNN's place
        if tf:
            heads = c.pick([h for h in (1, 2) if emb % h == 0])
            topts = [f"{emb}", f"{heads}", f"dim_feedforward={c.int(2, 6)}",
                     f"dropout={c.pick(['0.0', '0.1'])}"]
            if bf:
                topts.append("batch_first=True")
            if c.coin(0.3):
                topts.append("norm_first=True")
            if c.coin(0.3):
                topts.append("activation='gelu'")
            causal = c.coin(0.4)
            take = c.pick(["last", "mean"])
            dirs, hid, proj = 1, emb, False
        lines += [
            "class Net(nn.Module):",
            "    def __init__(self):",
            "        super().__init__()",
            f"        self.emb = nn.Embedding({vocab}, {emb}{', padding_idx=0' if pad else ''}"
            f"{', max_norm=1.0' if c.coin(0.2) else ''}"
            f"{', scale_grad_by_freq=True' if c.coin(0.2) else ''})",
            f"        self.rnn = nn.{rnn}({', '.join(ropts)})" if not tf else
            f"        self.rnn = nn.TransformerEncoderLayer({', '.join(topts)})",
            f"        self.proj = nn.Linear({(1 if proj else hid) * dirs}, {emb if tie else k})",
        ]
        if tie:
            lines += [f"        self.head = nn.Linear({emb}, {vocab}, bias=False)",
                      "        self.head.weight = self.emb.weight"]
        lines += ["        self.register_buffer('temp', torch.tensor(2.0))",
                  "    def forward(self, x):",
                  "        e = self.emb(x)"]
        if not bf:
            lines.append("        e = e.transpose(0, 1)")
        if tf:
            mask = (", src_mask=nn.Transformer.generate_square_subsequent_mask(e.shape["
                    f"{1 if bf else 0}]), is_causal=True") if causal else ""
            lines.append(f"        out = self.rnn(e{mask})")
        elif h0:
            hshape = f"{layers_ * dirs}, x.shape[0], {1 if proj else hid}"
            state = f"torch.zeros({hshape})"
            if rnn == "LSTM":
                state = f"(torch.randn({hshape}), torch.zeros({layers_ * dirs}, x.shape[0], {hid}))"
            lines.append(f"        out, h = self.rnn(e, {state})")
        else:
            lines.append("        out, h = self.rnn(e)")
        if take == "hidden":
            lines.append("        h = h[0] if isinstance(h, tuple) else h")
            lines.append("        z = h[-1]" if not bi else "        z = torch.cat([h[-2], h[-1]], dim=1)")
        elif take == "last":
            lines.append(f"        z = out[{':, ' if bf else ''}-1]")
        else:
            lines.append(f"        z = out.mean(dim={1 if bf else 0})")
        lines.append("        z = self.proj(z) / self.temp")
        if tie:
            lines.append("        z = self.head(torch.tanh(z))")
        lines += ["        return z", "model = Net()"]
    else:
        head = f"nn.Linear({feat}, {k})"
        if container == "seq":
            lines.append("model = nn.Sequential(" + ", ".join(body + [head]) + ")")
        elif container == "list":
            lines += ["class Net(nn.Module):",
                      "    def __init__(self):",
                      "        super().__init__()",
                      "        self.layers = nn.ModuleList([" + ", ".join(body) + "])",
                      f"        self.head = {head}",
                      f"        self.scale = nn.Parameter(torch.ones({k}) * 0.5)",
                      "    def forward(self, x):",
                      "        for layer in self.layers:",
                      "            x = layer(x)",
                      "        return self.head(x) * self.scale",
                      "model = Net()"]
        elif container == "dict":
            keys = [f"'l{i}'" for i in range(len(body))]
            lines += ["class Net(nn.Module):",
                      "    def __init__(self):",
                      "        super().__init__()",
                      "        self.blocks = nn.ModuleDict({" + ", ".join(
                          f"{key}: {layer}" for key, layer in zip(keys, body)) + "})",
                      f"        self.head = {head}",
                      f"        self.register_buffer('shift', torch.linspace(-1, 1, {k})"
                      f"{', persistent=False' if c.coin(0.3) else ''})",
                      "    def forward(self, x):",
                      "        for name, block in self.blocks.items():",
                      "            x = block(x)",
                      "        return self.head(x) + self.shift",
                      "model = Net()"]
        else:
            tie = feat >= 1 and c.coin(0.5)
            lines += ["class Block(nn.Module):",
                      "    def __init__(self, f):",
                      "        super().__init__()",
                      "        self.a = nn.Linear(f, f)",
                      "        self.b = nn.Linear(f, f)"]
            if tie:
                lines.append("        self.b.weight = self.a.weight")
            lines += ["        self.alpha = nn.Parameter(torch.tensor(0.5))",
                      "        self.register_buffer('calls', torch.zeros(()))",
                      "    def forward(self, x):",
                      "        self.calls += 1",
                      f"        h = {_act(c)}(self.a(x))",
                      "        h = F.dropout(h, 0.3, self.training)" if c.coin(0.3) else "",
                      "        return x + self.alpha * self.b(h)",
                      "class Net(nn.Module):",
                      "    def __init__(self):",
                      "        super().__init__()",
                      "        self.body = nn.Sequential(" + ", ".join(body) + ")",
                      f"        self.block = Block({feat})",
                      f"        self.head = {head}",
                      "    def forward(self, x):",
                      "        return self.head(self.block(self.body(x)))",
                      "model = Net()"]
    if kind != "seq" and c.coin(0.2):
        which = c.pick(["weight_norm", "spectral_norm", "orthogonal"])
        lines += ["for m in list(model.modules()):",
                  "    if isinstance(m, nn.Linear):",
                  f"        nn.utils.parametrizations.{which}(m)",
                  "        break"]
    if c.coin(0.3):
        lines += ["def init_fn(m):",
                  "    if isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d)):",
                  f"        nn.init.{c.pick(INITS)}",
                  "        if m.bias is not None:",
                  f"            nn.init.{c.pick(['zeros_(m.bias)', 'constant_(m.bias, 0.1)', 'normal_(m.bias, std=0.01)'])}",
                  "model.apply(init_fn)"]
    dtype64 = c.coin(0.1)
    if dtype64:
        lines.append("model = model.double()")
    lines.append(x + (".double()" if dtype64 and kind != "seq" else ""))
    setup, loss_expr, tgt = _loss(c, k)
    lines += [ln for ln in setup if ln] + tgt.split("\n")
    if dtype64:
        lines += ["target = target.double() if target.is_floating_point() else target"]
        for var in ("cw", "bw", "pw"):
            if any(ln.startswith(var + " =") for ln in setup):
                lines.append(f"{var} = {var}.double()")
        if "var = " in tgt:
            lines.append("var = var.double()")
    # ---- hooks
    hooks = c.pick(["none", "forward", "backward", "tensor", "all"])
    if hooks in ("forward", "all"):
        kw = c.coin(0.3)
        lines += ["def pre(mod, inp):",
                  "    log.append(('pre', tuple(inp[0].shape)))"]
        if c.coin(0.3):
            lines.append("    return (inp[0] * 1.5,)")
        lines += [f"def post(mod, inp, {'kwargs, ' if kw else ''}out):",
                  "    log.append(('post', tuple(out.shape), out.requires_grad))"]
        if c.coin(0.3):
            lines.append("    return out * 0.5")
        lines += ["hp = model.register_forward_pre_hook(pre)",
                  "hf = list(model.children())[-1].register_forward_hook(post"
                  f"{', with_kwargs=True' if kw else ''})"]
    if hooks in ("backward", "all"):
        lines += ["def bwd(mod, gin, gout):",
                  "    log.append(('bw', [None if g is None else tuple(g.shape) for g in gin],"
                  " [tuple(g.shape) for g in gout]))",
                  "hb = list(model.children())[-1].register_full_backward_hook(bwd)"]
    if hooks in ("tensor", "all"):
        lines += ["first = list(model.parameters())[0]",
                  "ht = first.register_hook(lambda g: log.append(('grad', tuple(g.shape))))"]
        if c.coin(0.4):
            lines.append("hs = first.register_hook(lambda g: g * 0.5)")
    # ---- freezing, optimizer, scheduler
    if c.coin(0.2):
        lines.append("list(model.parameters())[0].requires_grad_(False)")
    oname = c.pick(list(OPTIMIZERS))
    oopts = OPTIMIZERS[oname](c)
    if c.coin(0.3):
        lines += ["params = list(model.parameters())",
                  "half = len(params) // 2",
                  f"opt = torch.optim.{oname}([{{'params': params[:half]}}, "
                  f"{{'params': params[half:], 'weight_decay': 0.0}}], {', '.join(oopts)})"]
    else:
        lines.append(f"opt = torch.optim.{oname}(model.parameters(), {', '.join(oopts)})")
    sched = c.pick(SCHEDULERS)
    if sched:
        lines.append("sched = " + sched.format(a=c.int(1, 3)))
    steps = c.int(1, 3)
    clip = c.pick(["none", "norm", "norm", "value"])
    set_none = c.coin(0.7)
    lines += [f"for step in range({steps}):",
              f"    opt.zero_grad({'' if set_none else 'set_to_none=False'})",
              "    out = model(x)",
              f"    loss = {loss_expr}",
              "    loss.backward()"]
    if clip == "norm":
        lines.append(f"    print('norm', nn.utils.clip_grad_norm_(model.parameters(), "
                     f"{_f(c, 0.1, 2)}{', norm_type=1.0' if c.coin(0.2) else ''}))")
    elif clip == "value":
        lines.append("    nn.utils.clip_grad_value_(model.parameters(), 0.05)")
    if oname == "LBFGS":
        lines += ["    def closure():",
                  "        opt.zero_grad()",
                  "        out = model(x)",
                  f"        l = {loss_expr}",
                  "        l.backward()",
                  "        return l",
                  "    print('closure', opt.step(closure))"]
    else:
        lines.append("    opt.step()")
    if sched and "Plateau" in sched:
        lines.append("    sched.step(loss.item())")
    elif sched:
        lines.append("    sched.step()")
    lines.append("    print(step, loss.item(), loss)")
    if sched:
        lines.append("    print([g['lr'] for g in opt.param_groups])")
    # ---- reports
    lines += ["print(out)", "print(model)", "print(log)",
              "print([(k, tuple(v.shape), v.dtype) for k, v in model.state_dict().items()])",
              "for name, p in model.named_parameters():",
              "    print(name, p, p.grad)",
              "sd = opt.state_dict()",
              "print(sd['param_groups'])",
              "for i in sorted(sd['state'])[:2]:",
              "    print(i, sd['state'][i])"]
    if c.coin(0.5):
        lines += ["for name, b in model.named_buffers():", "    print(name, b)"]
    if c.coin(0.3):
        lines.append("print(opt)")
    if c.coin(0.3) and "crit(" in loss_expr:
        lines.append("print(crit)")
    if sched and c.coin(0.3):
        lines.append("print(sched.get_last_lr(), sched.last_epoch)")
    if c.coin(0.3):
        lines += ["print(out.grad_fn, out.grad_fn.next_functions)",
                  "print(loss.grad_fn, loss.grad_fn.name())"]
    if c.coin(0.3):
        lines += ["print(model.load_state_dict(model.state_dict()))",
                  "sd2 = model.state_dict()",
                  "gone = list(sd2)[-1]",
                  "del sd2[gone]",
                  "sd2['extra.weight'] = torch.zeros(1)",
                  "print(model.load_state_dict(sd2, strict=False))"]
    if c.coin(0.3):
        lines += ["opt.load_state_dict(opt.state_dict())",
                  "print(nn.utils.parameters_to_vector(model.parameters()).shape)",
                  "print([n for n, _ in model.named_modules()])"]
    if c.coin(0.2):
        lines += ["model.zero_grad(set_to_none=False)",
                  "print([None if p.grad is None else p.grad.abs().sum().item() "
                  "for p in model.parameters()])"]
    if container == "seq" and kind != "seq" and c.coin(0.4):
        lines += ["print(len(model), model[0], model[-1])", "print(model[:2])"]
    if c.coin(0.6):
        lines += ["model.eval()", "with torch.no_grad():", "    ev = model(x)",
                  "print(ev, ev.requires_grad, model.training)", "model.train()",
                  "print([m.training for m in model.modules()])"]
    if hooks != "none" and c.coin(0.5):
        lines += [f"{h}.remove()" for h, on in (("hp", hooks in ("forward", "all")),
                                                ("hf", hooks in ("forward", "all")),
                                                ("hb", hooks in ("backward", "all")),
                                                ("ht", hooks in ("tensor", "all"))) if on]
        lines += ["loss2 = " + loss_expr.replace("out", "model(x)", 1), "loss2.backward()",
                  "print(loss2, len(log))"]
    if c.coin(0.3):
        lines += ["for p in model.parameters():", "    p.requires_grad_(False)",
                  "y = model(x)", "print(y.requires_grad, y.grad_fn)"]
    return "\n".join(ln for ln in lines if ln) + "\n"


@st.composite
def programs(draw):
    return program(DrawChooser(draw))


# ------------------------------------------------------------------ runners
def run_torch(source: str) -> str:
    """stdout of the program with real torch (in-process, warnings silenced)."""
    return D.run_torch(source)


def _facade_import(real=builtins.__import__):
    def imp(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            mod = importlib.import_module("gradcli." + name)
            return mod if fromlist else importlib.import_module("gradcli.torch")
        return real(name, globals, locals, fromlist, level)
    return imp


def run_facade(source: str) -> str:
    """stdout of the program as plain Python with `torch` bound to gradcli.torch (the
    names `import torch...` resolves are redirected in this program's builtins only)."""
    from gradcli.engine.grad_mode import set_grad_enabled
    gt = importlib.import_module("gradcli.torch")
    out = io.StringIO()
    bi = dict(vars(builtins))
    bi["__import__"] = _facade_import()
    gt.set_default_dtype(gt.float32)
    set_grad_enabled(True)
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(source, "prog.py", "exec"),  # noqa: S102
                 {"__name__": "__main__", "__builtins__": bi})
        except Exception as e:  # noqa: BLE001 - reported as output, compared with torch's
            print(f"UNCAUGHT {type(e).__name__}: {e}")
    return out.getvalue()


def run_language(source: str) -> str:
    """stdout of the program through the gradcli language (`gradcli run`'s session)."""
    return D.run_gradcli(source, max_steps=10**6)


def _tiny(text: str) -> bool:
    return any(0 < abs(float(v)) < 1e-6 for v in D.NUM.findall(D.normalise(text)))


def compare(ours: str, theirs: str) -> str:
    """difflib_torch.compare's verdict, with one more class: 'noise' when the texts agree
    but for numbers and a gradient that is mathematically zero shows as rounding noise
    (a nonzero value below 1e-6: a bias in front of a normalisation, a singleton group)
    in either output. Such noise differs between any two summation orders; an optimizer
    that divides by the gradient's size (Adam, RMSprop, Adagrad) or takes its sign (Rprop)
    turns it into a visible step, so later values differ without a bug."""
    verdict = D.compare(ours, theirs)
    if verdict != "differ":
        return verdict
    a, b = D.normalise(ours), D.normalise(theirs)
    same_text = "".join(D.NUM.sub("#", a).split()) == "".join(D.NUM.sub("#", b).split())
    # (or an exact 0 against a small value: a singleton group normalised, which one
    # kernel's fused x * rstd - mean * rstd leaves as rounding noise)
    zero_vs_small = any((float(x) == 0) != (float(y) == 0) and max(abs(float(x)),
                                                                   abs(float(y))) < 1e-3
                        for x, y in zip(D.NUM.findall(a), D.NUM.findall(b)))
    return "noise" if same_text and (_tiny(a) or _tiny(b) or zero_vs_small) else "differ"


ORDER = ["same", "close", "noise", "differ"]


def compare3(source: str):
    """(verdict, outputs): the worst of facade-vs-torch and language-vs-torch."""
    theirs = run_torch(source)
    facade = run_facade(source)
    lang = run_language(source)
    verdicts = [compare(facade, theirs), compare(lang, theirs)]
    worst = max(verdicts, key=ORDER.index)
    return worst, {"torch": theirs, "facade": facade, "language": lang,
                   "facade_verdict": verdicts[0], "language_verdict": verdicts[1]}


# ------------------------------------------------------------------ error paths
ERRORS = [
    # a class whose forward is wrong
    ("bad_forward_attr", """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fcc(x)
model = Net()
y = model(torch.randn(2, 3))
"""),
    ("bad_forward_shape", """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
    def forward(self, x):
        return self.fc(x.t())
model = Net()
y = model(torch.randn(2, 3))
"""),
    ("no_forward", """class Net(nn.Module):
    def __init__(self):
        super().__init__()
model = Net()
y = model(torch.randn(2, 3))
"""),
    ("no_super_init", """class Net(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(3, 2)
model = Net()
"""),
    # wrong shapes into layers
    ("linear_shape", "y = nn.Linear({a}, 2)(torch.randn(2, {b}))\n"),
    ("conv2d_channels", "y = nn.Conv2d({a}, 2, 3)(torch.randn(1, {b}, 5, 5))\n"),
    ("conv1d_small", "y = nn.Conv1d(1, 2, 5)(torch.randn(1, 1, {a}))\n"),
    ("conv2d_rank", "y = nn.Conv2d(1, 2, 3)(torch.randn({a}, 5))\n"),
    ("bn_channels", "y = nn.BatchNorm1d({a})(torch.randn(3, {b}))\n"),
    ("bn_single", "y = nn.BatchNorm1d(3)(torch.randn(1, 3))\n"),
    ("layernorm_shape", "y = nn.LayerNorm({a})(torch.randn(2, {b}))\n"),
    ("groupnorm_groups", "y = nn.GroupNorm({a}, 5)(torch.randn(2, 5))\n"),
    ("embedding_range", "y = nn.Embedding({a}, 2)(torch.tensor([{b}, {a}]))\n"),
    ("embedding_float", "y = nn.Embedding(4, 2)(torch.randn(3))\n"),
    ("lstm_input", "y = nn.LSTM({a}, 2)(torch.randn(3, 1, {b}))\n"),
    ("gru_rank", "y = nn.GRU(2, 2)(torch.randn(2, 2, 2, 2))\n"),
    ("lstm_hidden", "y = nn.LSTM(2, 3)(torch.randn(4, 1, 2), (torch.zeros(1, 1, {a}), "
     "torch.zeros(1, 1, 3)))\n"),
    ("maxpool_big", "y = nn.MaxPool2d({a})(torch.randn(1, 1, 2, 2))\n"),
    ("ce_target", "y = nn.CrossEntropyLoss()(torch.randn(2, 3), torch.tensor([0, {a}]))\n"),
    ("ce_float_target_shape", "y = F.cross_entropy(torch.randn(2, 3), torch.randn(2, {a}))\n"),
    ("mse_shape", "y = F.l1_loss(torch.randn(2, {a}), torch.randn(3, {b}))\n"),
    ("bce_range", "y = F.binary_cross_entropy(torch.tensor([{a}.5]), torch.tensor([1.0]))\n"),
    ("nll_rank", "y = F.nll_loss(torch.randn(2, 3), torch.tensor([[0], [1]]))\n"),
    ("flatten_unflatten", "y = nn.Unflatten(1, ({a}, 3))(torch.randn(2, 5))\n"),
    ("dropout_p", "d = nn.Dropout({a}.5)\n"),
    # optimizers
    ("opt_nonleaf", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.{opt}([w * 2], lr=0.1)\n"),
    ("opt_tensor", "w = torch.randn(3, requires_grad=True)\nopt = torch.optim.{opt}(w, lr=0.1)\n"),
    ("opt_empty", "opt = torch.optim.{opt}([], lr=0.1)\n"),
    ("opt_lr", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.{opt}([w], lr=-{a})\n"),
    ("opt_dup", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.{opt}([{{'params': [w]}}, {{'params': [w]}}], lr=0.1)\n"),
    ("adam_betas", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.Adam([w], betas=(1.{a}, 0.9))\n"),
    ("sgd_nesterov", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1, nesterov=True)\n"),
    ("opt_kwarg", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.{opt}([w], lr=0.1, bogus={a})\n"),
    # schedulers
    ("sched_not_opt", "s = torch.optim.lr_scheduler.StepLR({a}, step_size=1)\n"),
    ("sched_lambda_count", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.LambdaLR(opt, [lambda e: 1.0, lambda e: 0.5])\n"),
    ("sched_linear_factor", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.LinearLR(opt, start_factor={a}.5)\n"),
    ("sched_onecycle_steps", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps={a})\n"
     "for i in range({a} + 1):\n    opt.step()\n    s.step()\n"),
    ("sched_plateau_mode", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode='middle')\n"),
    ("sched_plateau_factor", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor={a}.0)\n"),
    ("sched_cosine_t0", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=-{a})\n"),
    ("sched_step_size", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.StepLR(opt, step_size='{a}')\ns.step()\n"),
    ("sched_multistep", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\n"
     "s = torch.optim.lr_scheduler.MultiStepLR(opt, milestones={a})\n"),
    ("clip_nonfinite", "w = torch.randn(3, requires_grad=True)\n"
     "(w * float('inf')).sum().backward()\n"
     "nn.utils.clip_grad_norm_([w], 1.0, error_if_nonfinite=True)\n"),
    ("state_dict_missing", "m = nn.Linear(2, {a})\n"
     "m.load_state_dict({{'weight': torch.zeros({a}, 2)}})\n"),
    ("state_dict_shape", "m = nn.Linear(2, 2)\n"
     "m.load_state_dict({{'weight': torch.zeros({a}, 3), 'bias': torch.zeros(2)}})\n"),
    ("register_param_type", "m = nn.Linear(2, 2)\nm.register_parameter('p', torch.zeros({a}))\n"),
    ("register_buffer_dup", "m = nn.Linear(2, 2)\nm.register_buffer('weight', torch.zeros({a}))\n"),
    ("add_module_type", "m = nn.Sequential()\nm.add_module('x', {a})\n"),
    # errors in the middle of a training loop, inside methods
    ("loop_bad_forward", """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x, step):
        if step == {a}:
            return self.fc(x[:, :2])
        return self.fc(x)
model = Net()
opt = torch.optim.{opt}(model.parameters(), lr=0.1)
for step in range({b}):
    opt.zero_grad()
    loss = model(torch.randn(2, 3), step).sum()
    loss.backward()
    opt.step()
    print(step, loss.item())
"""),
    ("backward_twice", "m = nn.Linear(2, {a})\nloss = m(torch.randn(3, 2)).tanh().sum()\n"
     "loss.backward()\nloss.backward()\n"),
    ("inplace_leaf_param", "m = nn.Linear(2, {a})\nm.weight.add_(1)\n"),
    ("linear_dtype", "y = nn.Linear(2, {a})(torch.randn(3, 2, dtype=torch.float64))\n"),
    ("ce_target_dtype", "y = F.cross_entropy(torch.randn(2, 3), torch.tensor([0.0, {a}.0]))\n"),
    ("ce_smoothing", "y = F.cross_entropy(torch.randn(2, 3), torch.tensor([0, 1]), "
     "label_smoothing={a}.5)\n"),
    ("loss_reduction", "y = nn.MSELoss(reduction='avg')(torch.randn({a}), torch.randn({a}))\n"),
    ("embedding_negative", "y = nn.Embedding(4, 2)(torch.tensor([-{a}]))\n"),
    ("lstm_batch_first", "y = nn.LSTM(2, 3, batch_first=True)(torch.randn(1, {b}, {b}))\n"),
    ("conv_same_strided", "c = nn.Conv2d(1, 1, 3, padding='same', stride={b})\n"),
    # (not: a bad padding_mode. PyTorch's message shows a set, whose order follows the
    # string hashes of the process that compiled conv.py: no fixed text to match)
    ("conv_groups", "c = nn.Conv2d({b}, 2, 3, groups={b})\n"),
    ("buffer_type", "m = nn.Linear(2, 2)\nm.register_buffer('x', {a})\n"),
    ("modulelist_type", "m = nn.ModuleList([nn.Linear(2, 2), {a}])\n"),
    ("sequential_index", "m = nn.Sequential(nn.Linear(2, 2))\nprint(m[{a}])\n"),
    ("clip_norm_type", "w = torch.randn(3, requires_grad=True)\nw.sum().backward()\n"
     "nn.utils.clip_grad_norm_([w], 1.0, norm_type='bad')\n"),
    ("sched_missing_arg", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.SGD([w], lr=0.1)\ns = torch.optim.lr_scheduler.StepLR(opt)\n"),
    ("lbfgs_no_closure", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.LBFGS([w])\nopt.step()\n"),
    ("opt_state_dict_groups", "w = torch.randn(3, requires_grad=True)\n"
     "opt = torch.optim.{opt}([w], lr=0.1)\n"
     "opt2 = torch.optim.{opt}([w, torch.randn(2, requires_grad=True)], lr=0.1)\n"
     "opt.load_state_dict(opt2.state_dict())\n"),
    ("param_assign_tensor", "m = nn.Linear(2, 2)\nm.weight = torch.randn(2, {a})\n"),
    ("forward_missing_arg", """class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
    def forward(self, x, y):
        return self.fc(x) + y
y = Net()(torch.randn({a}, 3))
"""),
    ("unflatten_bad", "y = nn.Unflatten(1, ({a}, -1))(torch.randn(2, 7))\n"),
    ("rnn_nonlinearity", "r = nn.RNN(2, 2, nonlinearity='gelu')\n"),
    ("rnn_dropout_warn_then_shape", "r = nn.GRU(2, 2, dropout=0.5)\n"
     "y = r(torch.randn(3, 1, {b}))\n"),
]


def error_program(c):
    """(case name, program text) of one error path with random numbers filled in."""
    name, tmpl = c.pick(ERRORS)
    a = c.int(1, 4)
    b = a + c.int(1, 3)
    opt = c.pick(["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
    head = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n" \
           f"torch.manual_seed({c.int(0, 99)})\n"
    return name, head + tmpl.format(a=a, b=b, opt=opt)


@st.composite
def error_programs(draw):
    return error_program(DrawChooser(draw))


def torch_error(source: str):
    """(exception type name, message, line number) PyTorch raises for the program, or
    None if it runs clean."""
    import traceback
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, "prog.grad", "exec"), {"__name__": "__main__"})  # noqa: S102
    except Exception as e:  # noqa: BLE001
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == "prog.grad"]
        return type(e).__name__, str(e), frames[-1].lineno if frames else None
    return None


def language_error(source: str):
    """(exit code, stderr) of the program through the language's session."""
    out, err = io.StringIO(), io.StringIO()
    code = run_source(source, "prog.grad", stdout=out, stderr=err,
                      limits=Limits(max_steps=10**6, max_elements=10**6))
    return code, err.getvalue()


def check_error_report(source: str, expected, code: int, err: str) -> list:
    """What is wrong with gradcli's report of an erroring program (empty: nothing)."""
    problems = []
    if expected is None:
        if code:
            problems.append(f"PyTorch runs clean, gradcli exits {code}: {err[:300]}")
        return problems
    kind, msg, line = expected
    if code == 0:
        problems.append(f"exit 0, PyTorch raises {kind}: {msg}")
        return problems
    if "Traceback" in err:
        problems.append("Python traceback in the report")
    lines = err.splitlines()
    # the error's own line (warnings the program raised on the way are reported first)
    heads = [i for i, ln in enumerate(lines) if re.match(r"prog\.grad:\d+:\d+: \w+: ", ln)]
    head = lines[heads[-1]] if heads else (lines[0] if lines else "")
    lines = lines[heads[-1]:] if heads else lines
    if line is not None and not head.startswith(f"prog.grad:{line}:"):
        problems.append(f"location: {head[:120]!r}, PyTorch raises at line {line}")
    first = msg.splitlines()[0] if msg else ""
    if f"{kind}: {first}" not in head:
        problems.append(f"message: gradcli {head!r}, PyTorch {kind}: {first!r}")
    if not any("^" in ln for ln in lines[1:]):
        problems.append("no caret under the source")
    return problems
