"""Helpers shared by the view tests (tests/test_views.py, tests/test_views_export.py)."""

from __future__ import annotations


def all_nodes(t):
    """Every node of t's graph, found independently of the views (explicit stack), so the
    tests can check what a view shows against the graph itself."""
    root = t.grad_fn
    seen, stack = set(), [root]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(c for c, _ in node.next_functions)
    return seen
