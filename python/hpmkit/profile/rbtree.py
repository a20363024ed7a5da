"""The order a red-black tree gives its items, for comparisons that are not a total order.

perf report sorts its entries by inserting them one by one into a Linux rbtree with a
comparison that is not transitive (entries of the same thread with equal Children compare
by call depth, others do not). The printed order then depends on the tree's shape, so
reproducing perf's order means building the same tree: the textbook bottom-up insertion
(the one lib/rbtree.c implements), with equal items going right.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

_RED, _BLACK = 0, 1


def inorder(items: Sequence[T], goes_left: Callable[[T, T], bool]) -> list[T]:
    """Insert items in order; goes_left(new, node) says whether new goes left of node.
    Returns the in-order traversal."""
    n = len(items)
    left = [-1] * n
    right = [-1] * n
    parent = [-1] * n
    color = [_RED] * n
    root = -1
    for i, it in enumerate(items):
        p, x = -1, root
        went_left = False
        while x != -1:
            p = x
            went_left = goes_left(it, items[x])
            x = left[x] if went_left else right[x]
        parent[i] = p
        if p == -1:
            root = i
        elif went_left:
            left[p] = i
        else:
            right[p] = i
        root = _fix(i, root, left, right, parent, color)
    out: list[T] = []
    stack: list[int] = []
    x = root
    while stack or x != -1:
        while x != -1:
            stack.append(x)
            x = left[x]
        x = stack.pop()
        out.append(items[x])
        x = right[x]
    return out


def _rotate(x, root, near, far, parent):
    """x goes down to the near side: its far child y takes its place and x becomes y's near
    child. (left, right) is a left rotation, (right, left) a right one: one body for both
    mirror images."""
    y = far[x]
    far[x] = near[y]
    if near[y] != -1:
        parent[near[y]] = x
    parent[y] = parent[x]
    if parent[x] == -1:
        root = y
    elif x == near[parent[x]]:
        near[parent[x]] = y
    else:
        far[parent[x]] = y
    near[y] = x
    parent[x] = y
    return root


def _fix(z, root, left, right, parent, color):
    while parent[z] != -1 and color[parent[z]] == _RED:
        p = parent[z]
        g = parent[p]
        # near: the side p hangs on below g; the other case is its mirror image
        near, far = (left, right) if p == left[g] else (right, left)
        u = far[g]
        if u != -1 and color[u] == _RED:
            color[p] = color[u] = _BLACK
            color[g] = _RED
            z = g
            continue
        if z == far[p]:
            z = p
            root = _rotate(z, root, near, far, parent)
            p = parent[z]
            g = parent[p]
        color[p] = _BLACK
        color[g] = _RED
        root = _rotate(g, root, far, near, parent)
    color[root] = _BLACK
    return root
