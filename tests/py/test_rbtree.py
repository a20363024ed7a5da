"""hpmkit.profile.rbtree, the insertion order perf report's rbtree gives its entries: with a
total order the tree must give exactly a stable sort (Python's sorted), whatever the insertion
order, so every rotation and recolouring of both mirror cases keeps every item in place."""
import random

from hpmkit.profile import rbtree


def test_total_order_is_a_stable_sort():
    rng = random.Random(7)
    for n in [0, 1, 2, 3, 5, 8, 13, 100, 1000]:
        for keys in (5, n + 1):  # many equal keys (stability), then mostly distinct ones
            items = [(rng.randrange(keys), i) for i in range(n)]
            got = rbtree.inorder(items, lambda new, node: new[0] < node[0])
            assert got == sorted(items, key=lambda t: t[0]), (n, keys)


def test_ascending_and_descending_inserts():
    # each insertion order drives the fix-up down one mirror side only
    up = list(range(500))
    assert rbtree.inorder(up, lambda new, node: new < node) == up
    assert rbtree.inorder(up[::-1], lambda new, node: new < node) == up
    assert rbtree.inorder(up, lambda new, node: new > node) == up[::-1]
