"""Everything that reproduces PyTorch 2.13's CPU kernels bit for bit, behind one switch.

PyTorch's results depend on the order its kernels add in and on the math library they call;
gradcli redoes those where a last bit shows in printed text (float32 sums, softmax, small
matrix products, a sigmoid): the summation orders of its reductions (`summation`), SLEEF's
and glibc's float32 exp and log and the fused multiply-adds its compiler contracts
(`sleef`, `fma`), MKL's order for small float32 products (`mkl`), the lane order of the
softmax kernels (`softmax`) and which signed zero max/min return (`extrema`). The op files
(engine/ops/) keep only their rules and call these.

`EXACT` (on unless the environment has `GRADCLI_EXACT_KERNELS=0`) switches all of it: off,
every kernel here computes with plain numpy, which agrees with PyTorch within
torch.testing's tolerances but not in the last bit (tests/test_kernels_switch.py). It is
read when a kernel runs, so setting `gradcli.engine.kernels.EXACT = False` in a process
takes effect from the next op.

Policy: no new op gets bit emulation; new ops compute with numpy/scipy at full accuracy
and meet torch.testing's tolerances.
"""

from __future__ import annotations

import os

EXACT: bool = os.environ.get("GRADCLI_EXACT_KERNELS", "1").strip() not in ("0", "false", "no", "off")
