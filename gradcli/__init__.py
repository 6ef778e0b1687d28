"""gradcli: a command-line expression differentiator with PyTorch-exact autograd on numpy."""

__version__ = "0.1.0"
