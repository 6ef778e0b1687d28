"""gradcli's autograd engine: numpy-backed tensors with PyTorch 2.x semantics.

No CLI, lark or rich imports live here: the engine is usable alone, through the
`gradcli.torch` facade.
"""

from gradcli.engine.memory import tune_malloc

tune_malloc()  # freed buffers stay for reuse: see engine/memory.py
