"""Numeric kernels that reproduce PyTorch's CPU arithmetic where its bits are promised."""
