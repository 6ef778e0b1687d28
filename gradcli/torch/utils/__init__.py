"""torch.utils: the data-loading part tutorials use (torch.utils.data), activation
checkpointing (torch.utils.checkpoint) and the hook handle's type (torch.utils.hooks); the
package loads on first use of torch.utils."""

from . import checkpoint, data, hooks  # noqa: F401
