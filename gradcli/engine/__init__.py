"""gradcli's autograd engine: numpy-backed tensors with PyTorch 2.x semantics.

No CLI, lark or rich imports live here: the engine is usable alone, through the
`gradcli.torch` facade, and then changes nothing process-wide (numpy's error state,
malloc, BLAS threads, CPU affinity stay as the program set them).
"""

import gradcli

if gradcli.OWNS_PROCESS:  # the `gradcli` command: its own process, tuned for it
    import numpy as _np

    from gradcli.engine.memory import tune_malloc

    tune_malloc()  # freed buffers stay for reuse: see engine/memory.py
    _np.seterr(all="ignore")  # as every op does for itself (engine/fpstate.py), once

# Every op, and with them the modules that complete a tensor (printing, backward, saved
# tensors): importing any engine module gives a whole engine (see late.py).
from gradcli.engine import ops  # noqa: E402,F401
