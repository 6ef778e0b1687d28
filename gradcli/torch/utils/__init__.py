"""torch.utils: the data-loading part tutorials use (torch.utils.data) and activation
checkpointing (torch.utils.checkpoint); the package loads on first use of torch.utils."""

from . import checkpoint, data  # noqa: F401
