"""What the new nn layer classes let a .grad program reach (the layers, their outputs and
grad_fns, CrossMapLRN2d's autograd Function and its ctx, AdaptiveLogSoftmaxWithLoss's
named tuple) stays inside the sandbox: the attribute crawler finds nothing unsafe, and
the modules' internals are refused."""

import io

import pytest

from gradcli.lang import Limits, Session
from tests.test_security_sandbox import BUDGET, crawl

PROGRAM = """
import torch
from torch import nn
torch.manual_seed(0)
x = torch.randn(2, 4, 3, 3, requires_grad=True)
layers = [nn.ConvTranspose2d(4, 2, 3), nn.Conv3d(1, 1, 1), nn.GroupNorm(2, 4), nn.RMSNorm(3),
          nn.PReLU(), nn.RReLU(), nn.AlphaDropout(), nn.CrossMapLRN2d(3), nn.ReflectionPad2d(1),
          nn.PixelShuffle(2), nn.Fold((2, 2), 1), nn.Upsample(scale_factor=2),
          nn.EmbeddingBag(4, 2), nn.FractionalMaxPool2d(2, output_size=1), nn.LPPool3d(2, 1),
          nn.TripletMarginWithDistanceLoss(), nn.CTCLoss(), nn.RNNBase, nn.RNNCellBase]
outs = [layers[0](x), layers[2](x), layers[7](x), layers[8](x), layers[5](x), layers[6](x)]
asm = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])
res = asm(torch.randn(3, 4), torch.tensor([0, 3, 5]))
res.loss.backward()
lrn = outs[2].grad_fn
"""


@pytest.mark.filterwarnings("ignore")  # (the crawler reads deprecated attributes too)
def test_crawl_finds_nothing_unsafe():
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    s.run(PROGRAM, "layers.grad")
    roots = [(k, s.globals[k]) for k in ("layers", "outs", "asm", "res", "lrn")]
    kept, bad = crawl(roots)
    assert not bad, bad[:20]
    reached = {type(obj).__name__ for obj in kept}
    assert {"ConvTranspose2d", "CrossMapLRN2d", "CrossMapLRN2dBackward", "_ASMoutput",
            "PairwiseDistance", "EmbeddingBag"} <= reached, reached


@pytest.mark.parametrize("attack", [
    "torch.nn.CrossMapLRN2d(3)(torch.ones(1, 2, 2, 2, requires_grad=True)).grad_fn.__dict__",
    "torch.nn.ConvTranspose2d(1, 1, 1)._output_padding",
    "getattr(torch.nn.GroupNorm(1, 1), '_' + 'parameters')",
    "torch.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2])._get_full_log_prob",
    "torch.nn.RNNBase.__subclasses__()",
])
def test_internals_refused(attack):
    s = Session(stdout=io.StringIO(), limits=Limits(**BUDGET))
    with pytest.raises(Exception) as info:
        s.run(f"import torch\ny = {attack}\n", "attack.grad")
    message = str(info.value)
    assert any(w in message for w in ("not allowed", "cannot", "not supported")), message
    assert "y" not in s.globals
