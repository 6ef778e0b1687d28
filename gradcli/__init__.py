"""gradcli: a command-line expression differentiator with PyTorch-exact autograd on numpy."""

__version__ = "0.1.0"

# True only in the `gradcli` command's own process (set by gradcli/cli/app.py's main):
# the engine then tunes process-wide settings that a library imported into someone
# else's program must leave alone (malloc's policy, numpy's error state).
OWNS_PROCESS = False
