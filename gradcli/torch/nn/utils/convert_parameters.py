"""torch.nn.utils.convert_parameters: parameters to one flat vector and back, under their
module's own name."""

from __future__ import annotations

from . import parameters_to_vector, vector_to_parameters  # noqa: F401

__all__ = ["parameters_to_vector", "vector_to_parameters"]
