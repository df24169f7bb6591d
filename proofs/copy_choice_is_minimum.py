"""copy_choice_is_minimum — the exact choice of duplicate copies in a merge finds the smallest embedding, by brute force.

Statement. For every input of the class below (tasks given by their covers ``lower[i][c]``,
nodes in topological order, and a group per node), :func:`theory.merge_copies.minimum_embedding`
(what ``hasse merge`` runs when a down-set holds equivalent duplicates) returns:

- with no bound (``greedy_nodes`` not given): an embedding with the fewest merged nodes
  of any embedding, and ``minimum = True``. An *embedding* (design.md §3) maps every task
  node ``c`` to a merged node of its group whose covers are exactly the images of ``c``'s
  covers, one-to-one on every down-set (two nodes of one task with a common upper bound
  never share an image); the result's ``maps`` must be one (every merged node an image,
  ``node_group`` and ``node_lower`` as the images say, covers created before the node
  they are covered by, ``first`` the first ``(task, node)`` mapped to each);
- with ``greedy_nodes`` equal to that minimum: ``(None, True)`` (nothing smaller exists);
  with the minimum plus one: an embedding with the minimum number of nodes;
- :func:`~theory.merge_copies.copies_needed`: for each group, the most distinct nodes of
  that group in one down-set ``↓u`` of one task.

The minimum is found here by brute force: an embedding with the fewest nodes is a
partition of the tasks' nodes into blocks (the merged nodes) such that a block holds one
group, every member of a block has covers in the same blocks, and no block holds two
nodes of one task with a common upper bound; every such partition is tried (blocks within
a group only).

The class at ``n``. For ``n <= 5``: every family whose task sizes add up to ``n`` (every
composition of ``n``), every task a Hasse diagram in topological numbering (each node's
covers an antichain of earlier nodes: 1, 2, 7, 40, 357 diagrams on 1 … 5 nodes, OEIS
A006455), and every assignment of groups to the ``n`` nodes up to renaming (a set
partition: 1, 2, 5, 15, 52): 975 inputs at n = 4, 26,364 at n = 5. Groups are arbitrary
here, not only those equivalence makes, a larger class. For ``n >= 6``: a seeded sample
of 2,000 of them (seed 0; the verdict line says "sample … not a full proof").

What a verdict covers. :mod:`theory.merge_copies` as it is in this checkout, on that
class (its step budget is never reached there). The merge around it (:mod:`theory.merge`,
equivalence) is covered by ``merge_is_minimum`` and ``merged_task_embeds_every_task``.

Counterexample: the input (covers and groups), what the search returned and the
brute-force minimum with a partition that reaches it.

Exhaustive method only (:mod:`proofs.engine_checks`): the search is Python. n = 4 takes well
under a second, n = 5 about ten seconds.

References: design.md §3 (the minimal merged task, duplicate copies), §5.
"""

from __future__ import annotations

import itertools
import time
from functools import lru_cache

import numpy as np

from hasse.proofs.cli import script_main
from hasse.proofs.engine_checks import NO_Z3, check_each, safely
from hasse.proofs.theorem import Context, Outcome, Theorem
from hasse.solvers.task_sets import compositions

NAME = "copy_choice_is_minimum"
STATEMENT = ("for every family of labelled Hasse diagrams with n nodes in all and every grouping of its nodes, "
             "minimum_embedding returns an embedding with the fewest merged nodes (brute force over partitions), "
             "None exactly when the bound it is given is already the minimum, and copies_needed its lower bound")
NOT_INVARIANT = ("the statement is about families of task diagrams and groupings, not about the positions of a "
                 "mask")
FULL_UPTO = 5
SAMPLE = 2000
SEED = 0
# the class sizes, counted here without the generator: diagrams (A006455) and set partitions (Bell numbers)
DIAGRAMS = (1, 1, 2, 7, 40, 357, 4824, 96428)
BELL = (1, 1, 2, 5, 15, 52, 203, 877)


# --------------------------------------------------------------------------- the class


@lru_cache(maxsize=None)
def diagrams(k: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """Every Hasse diagram on ``k`` nodes in topological numbering: each node's covers an antichain of earlier ones."""
    out = [()]
    for c in range(k):
        grown = []
        for lower in out:
            below = _below(lower)
            for size in range(c + 1):
                for covers in itertools.combinations(range(c), size):
                    if all(a not in below[b] and b not in below[a] for a, b in itertools.combinations(covers, 2)):
                        grown.append(lower + (covers,))
        out = grown
    return tuple(out)


def _below(lower) -> list[set[int]]:
    """``below[c]``: the nodes strictly below ``c``."""
    out: list[set[int]] = []
    for covers in lower:
        acc = set(covers)
        for d in covers:
            acc |= out[d]
        out.append(acc)
    return out


def sizes_of(cuts) -> tuple[int, ...]:
    """The composition of ``len(cuts) + 1`` with a cut after position ``j`` where ``cuts[j]``."""
    ends = [j + 1 for j, cut in enumerate(cuts) if cut] + [len(cuts) + 1]
    return tuple(b - a for a, b in zip([0] + ends, ends))


def set_partitions(n: int):
    """Restricted growth strings: ``a[0] = 0``, ``a[i] <= 1 + max(a[:i])``."""
    def rec(prefix, top):
        if len(prefix) == n:
            yield tuple(prefix)
            return
        for v in range(top + 2):
            yield from rec(prefix + [v], max(top, v))

    yield from rec([0], 0) if n else iter([()])


def split(sizes, labels):
    out, a = [], 0
    for s in sizes:
        out.append(tuple(labels[a:a + s]))
        a += s
    return out


def inputs(n: int):
    """``(iterator of (lower, group), scope)`` of the class at ``n``."""
    if n <= FULL_UPTO:
        def every():
            for sizes in compositions(n):
                for tasks in itertools.product(*(diagrams(s) for s in sizes)):
                    for labels in set_partitions(n):
                        yield list(tasks), split(sizes, labels)

        return every(), {"scope": "all"}
    rng = np.random.default_rng([SEED, n])

    def sample():
        for _ in range(SAMPLE):
            sizes = sizes_of(rng.random(n - 1) < 0.5)
            tasks = [_random_diagram(rng, s) for s in sizes]
            labels, top = [0], 0
            for _ in range(n - 1):
                labels.append(int(rng.integers(0, min(top + 2, 3))))
                top = max(top, labels[-1])
            yield tasks, split(sizes, labels)

    return sample(), {"scope": "sample", "sample": SAMPLE, "seed": SEED,
                      "space": "a composition, random antichain covers, a random grouping of at most 3 groups"}


def _random_diagram(rng, k: int):
    lower: tuple = ()
    for c in range(k):
        below = _below(lower)
        covers = [d for d in range(c) if rng.random() < 0.4]
        chosen = []
        for d in sorted(covers, reverse=True):  # keep an antichain: drop a node below one already chosen
            if all(d not in below[e] for e in chosen):
                chosen.append(d)
        lower = lower + (tuple(sorted(chosen)),)
    return lower


def space(n: int) -> int:
    """How many inputs the class has at ``n`` (counted from A006455 and the Bell numbers, not by the generator)."""
    if n > FULL_UPTO:
        return SAMPLE
    total = 0
    for sizes in compositions(n):
        total += int(np.prod([DIAGRAMS[s] for s in sizes]))
    return total * BELL[n]


# --------------------------------------------------------------------------- the definitions, by brute force


def _nodes(lower):
    return [(i, c) for i, task in enumerate(lower) for c in range(len(task))]


def _shares(lower) -> set:
    """Pairs ``((i, c), (i, d))``, ``c < d``, of one task with a common upper bound (reflexive)."""
    out = set()
    for i, task in enumerate(lower):
        below = _below(task)
        downs = [below[u] | {u} for u in range(len(task))]
        for c, d in itertools.combinations(range(len(task)), 2):
            if any(c in s and d in s for s in downs):
                out.add(((i, c), (i, d)))
    return out


def _block_partitions(items):
    """Every partition of ``items`` into blocks."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _block_partitions(rest):
        yield [[first]] + part
        for b in range(len(part)):
            yield part[:b] + [[first] + part[b]] + part[b + 1:]


def brute_minimum(lower, group) -> tuple[int, dict]:
    """The fewest blocks of a valid partition (module docstring), and one partition reaching it."""
    nodes = _nodes(lower)
    shares = _shares(lower)
    by_group: dict[int, list] = {}
    for i, c in nodes:
        by_group.setdefault(group[i][c], []).append((i, c))
    best = (len(nodes) + 1, None)
    for choice in itertools.product(*(list(_block_partitions(members)) for members in by_group.values())):
        blocks = [b for part in choice for b in part]
        if len(blocks) >= best[0]:
            continue
        block_of = {x: j for j, b in enumerate(blocks) for x in b}
        if any(block_of[a] == block_of[b] for a, b in shares):
            continue
        if all(len({frozenset(block_of[(i, d)] for d in lower[i][c]) for i, c in b}) == 1 for b in blocks):
            best = (len(blocks), {f"{i}.{c}": block_of[(i, c)] for i, c in nodes})
    return best


def brute_needed(lower, group) -> dict[int, int]:
    need: dict[int, int] = {}
    for i, task in enumerate(lower):
        below = _below(task)
        for u in range(len(task)):
            counts: dict[int, int] = {}
            for c in below[u] | {u}:
                counts[group[i][c]] = counts.get(group[i][c], 0) + 1
            for g, k in counts.items():
                need[g] = max(need.get(g, 0), k)
    return need


def embedding_problem(found, lower, group) -> str | None:
    """Why ``found`` (an :class:`~theory.merge_copies.Embedding`) is not an embedding of the input, or None."""
    m = found.nodes
    if not (len(found.node_group) == len(found.node_lower) == len(found.first) == m):
        return (f"{m} nodes but {len(found.node_group)} groups, {len(found.node_lower)} cover lists, "
                f"{len(found.first)} firsts")
    if len(found.maps) != len(lower) or any(len(mp) != len(t) for mp, t in zip(found.maps, lower)):
        return "the maps do not have one entry per task node"
    images = set()
    for i, (task, mp) in enumerate(zip(lower, found.maps)):
        for c, x in enumerate(mp):
            if not 0 <= x < m:
                return f"node {i}.{c} maps to {x}, outside 0 … {m - 1}"
            images.add(x)
            if found.node_group[x] != group[i][c]:
                return f"node {i}.{c} of group {group[i][c]} maps to merged node {x} of group {found.node_group[x]}"
            if tuple(sorted(found.node_lower[x])) != tuple(sorted({mp[d] for d in task[c]})):
                return (f"node {i}.{c}: merged node {x} covers {list(found.node_lower[x])}, the images of its covers "
                        f"are {sorted({mp[d] for d in task[c]})}")
    for a, b in _shares(lower):
        if found.maps[a[0]][a[1]] == found.maps[b[0]][b[1]]:
            return (f"nodes {a[0]}.{a[1]} and {b[0]}.{b[1]} share a down-set and the merged node "
                    f"{found.maps[a[0]][a[1]]}")
    if images != set(range(m)):
        return f"merged nodes {sorted(set(range(m)) - images)} are no node's image"
    for x in range(m):
        if any(y >= x for y in found.node_lower[x]):
            return f"merged node {x} covers {list(found.node_lower[x])}: not created before it"
        i, c = found.first[x]
        earliest = min((j, d) for j, mp in enumerate(found.maps) for d, y in enumerate(mp) if y == x)
        if (i, c) != earliest:
            return f"first[{x}] = {(i, c)}, the first node mapped to it is {earliest}"
    return None


def difference(lower, group) -> dict | None:
    """What is wrong with the search on one input, or None."""
    from hasse.theory.merge_copies import copies_needed, minimum_embedding

    least, partition = brute_minimum(lower, group)
    need, error = safely(lambda: copies_needed(lower, group))
    if error or need != brute_needed(lower, group):
        return {"call": "copies_needed", "engine": error or need, "definition": brute_needed(lower, group)}
    for bound in (None, least, least + 1):
        got, error = safely(lambda: minimum_embedding(lower, group, greedy_nodes=bound))
        where = {"call": f"minimum_embedding(greedy_nodes={bound})", "minimum": least, "partition": partition}
        if error:
            return where | {"engine": error}
        found, minimum = got
        if bound == least:
            if found is not None or minimum is not True:
                return where | {"engine": [None if found is None else found.nodes, minimum],
                                "definition": "(None, True): the bound is the minimum"}
            continue
        if found is None or minimum is not True or found.nodes != least:
            return where | {"engine": [None if found is None else found.nodes, minimum],
                            "definition": f"an embedding with {least} nodes, minimum True"}
        problem = embedding_problem(found, lower, group)
        if problem:
            return where | {"engine": problem, "maps": [list(x) for x in found.maps]}
    return None


def exhaustive_check(n: int, ctx: Context) -> Outcome:
    start = time.monotonic()
    listed, scope = inputs(n)
    total = space(n)
    return check_each(listed, total, ctx, lambda x: difference(*x),
                      lambda x: {"lower": [[list(c) for c in t] for t in x[0]], "group": [list(g) for g in x[1]]},
                      scope | {"methods": NO_Z3}, start, noun="inputs",
                      sample=f"seed {SEED}" if scope["scope"] == "sample" else None, every=1024)


THEOREM = Theorem(NAME, STATEMENT, exhaustive_check, None, space=space, not_invariant=NOT_INVARIANT)

if __name__ == "__main__":
    raise SystemExit(script_main(THEOREM))
