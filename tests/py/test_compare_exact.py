"""The exact cost a ranked context is checked against (hpmkit.compare.exact): the call paths
merged into it, and for a top-name context also the paths of its function that no sample
reached on that side, since which leftovers a top-name context holds was decided by which
ones were sampled."""
from types import SimpleNamespace

from hpmkit.compare.exact import Exact
from hpmkit.compare.match import Group

K = "kernel"
EXACT = {(K, ("sys_a", "memset")): 100.0,     # sampled, in the group
         (K, ("sys_b", "memset")): 5.0,       # never sampled on this side
         (K, ("sys_c", "memset")): 40.0,      # sampled, but matched elsewhere (another group)
         (K, ("sys_b", "memcpy")): 7.0,       # another function
         ("user", ("main", "memset")): 9.0}   # another space


def row(kind, anchor, paths):
    g = Group(anchor, kind)
    g.a = list(paths)
    return SimpleNamespace(workload="w", space=K, group=g)


SIDE = SimpleNamespace(by_workload={"w": {(K, ("sys_a", "memset")): None, (K, ("sys_c", "memset")): None}})


def test_top_name_context_also_counts_its_functions_unsampled_paths():
    r = row("top-name", ("memset",), [("sys_a", "memset")])
    assert Exact._cost(r, EXACT, r.group.a, SIDE) == 105.0


def test_other_contexts_count_exactly_their_merged_paths():
    for kind, anchor in (("exact", ("sys_a", "memset")), ("partial", ("sys_a",)), ("parent", ("sys_a",))):
        r = row(kind, anchor, [("sys_a", "memset")])
        assert Exact._cost(r, EXACT, r.group.a, SIDE) == 100.0, kind


def test_a_workload_without_samples_on_the_side_adds_every_path_of_the_function():
    r = row("top-name", ("memset",), [])
    empty = SimpleNamespace(by_workload={})
    assert Exact._cost(r, EXACT, [], empty) == 145.0
