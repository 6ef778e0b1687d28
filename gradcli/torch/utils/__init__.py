"""torch.utils: the data-loading part tutorials use (torch.utils.data)."""

from . import data  # noqa: F401
