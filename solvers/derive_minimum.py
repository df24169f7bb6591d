"""Is a family's merged task the smallest there is? Both methods of ``merge_is_minimum`` on one family.

`hasse derive --minimum` and the tests of the derived families (issue 25) call
:func:`check_minimum`: the kit's merge (:func:`theory.merge.family_to_merged_task`) has ``k``
nodes; it is minimum when

- *exhaustive*: the quotient search of :func:`solvers.merge_search.min_merged_nodes` (tasks
  rebuilt from raw rows by :mod:`solvers.posets`, independent of ``theory``) finds no merged
  diagram with fewer than ``k`` nodes and one with ``k``;
- *z3*: :func:`solvers.smt.merge_within.merge_within` is unsat at ``k − 1`` and sat at ``k``.

Each method reports ``"proved"``, ``"refuted"`` (with the smaller count) or ``"unknown"`` (its
time or step budget ran out: never a proof). The two are exact for the family given; a family
sampled from a larger one (``count=``) is that family only — the caller says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

from hasse.theory.merge import family_to_merged_task


@dataclass(frozen=True)
class MinimumCheck:
    nodes: int  # the kit's merged nodes
    method: str  # "exhaustive" | "z3"
    verdict: str  # "proved" | "refuted" | "unknown"
    smaller: int | None = None  # a smaller merged diagram's node count (refuted)
    seconds: float = 0.0
    why: str = ""

    def to_json(self) -> dict:
        return {"method": self.method, "verdict": self.verdict, "nodes": self.nodes, "smaller": self.smaller,
                "seconds": round(self.seconds, 3), "why": self.why}


def check_minimum(tasks: Sequence, methods: Sequence[str] = ("exhaustive", "z3"), *,
                  timeout: float | None = 60.0) -> tuple[MinimumCheck, ...]:
    """Both checks of the merge's minimality on ``tasks`` (seconds per method bounded by ``timeout``).

    >>> from hasse.theory.catalog import build_family
    >>> [(c.method, c.verdict, c.nodes) for c in check_minimum(build_family("infill:n=3"))]
    [('exhaustive', 'proved', 7), ('z3', 'proved', 7)]
    """
    merged = family_to_merged_task(tuple(tasks))
    out = []
    for method in methods:
        start = time.perf_counter()
        if method == "exhaustive":
            check = _exhaustive(tasks, merged.nodes, timeout)
        elif method == "z3":
            check = _z3(tasks, merged.nodes, timeout)
        else:
            raise ValueError(f"unknown method {method!r}")
        out.append(MinimumCheck(merged.nodes, method, check[0], check[1], time.perf_counter() - start, check[2]))
    return tuple(out)


def _exhaustive(tasks, k: int, timeout):
    from hasse.solvers.merge_search import min_merged_nodes
    from hasse.solvers.posets import task_diagram

    end = None if timeout is None else time.perf_counter() + timeout

    def deadline():
        if end is not None and time.perf_counter() > end:
            raise TimeoutError

    diagrams = [(d.inputs, d.lower) for d in map(task_diagram, tasks)]
    try:
        least = min_merged_nodes(diagrams, k + 1, deadline=deadline)
    except TimeoutError:
        return "unknown", None, f"the quotient search ran past {timeout:g} s"
    if least is None:
        return "refuted", None, f"the search finds no merged diagram of {k} nodes: the kit's is not one"
    if least.nodes < k:
        return "refuted", least.nodes, f"a merged diagram of {least.nodes} nodes exists"
    return "proved", None, f"no merged diagram has fewer than {k} nodes (quotient search)"


def _z3(tasks, k: int, timeout):
    from hasse.solvers.posets import task_diagram
    from hasse.solvers.smt.merge_within import merge_within
    from hasse.solvers.smt.prove import SAT, UNKNOWN

    diagrams = [task_diagram(t) for t in tasks]
    fewer = merge_within(diagrams, k - 1, timeout=timeout) if k > 0 else None
    if fewer is not None and fewer.status == UNKNOWN:
        return "unknown", None, f"Z3 gave no answer for {k - 1} nodes within {timeout} s"
    if fewer is not None and fewer.status == SAT:
        return "refuted", k - 1, f"Z3 finds a merged diagram of {k - 1} nodes"
    exact = merge_within(diagrams, k, timeout=timeout)
    if exact.status == UNKNOWN:
        return "unknown", None, f"Z3 gave no answer for {k} nodes within {timeout} s"
    if exact.status != SAT:
        return "refuted", None, f"Z3 finds no merged diagram of {k} nodes: the kit's is not one"
    return "proved", None, f"unsat at {k - 1} nodes, sat at {k} (Z3)"


def verdict_of(checks) -> str | None:
    """One verdict of the minimality checks: refuted if either refutes; proved if one proves (the two are
    exact methods; the other may have run out of time); unknown if none decided; None if not run.

    ``checks``: :meth:`MinimumCheck.to_json` dicts.

    >>> verdict_of([{"verdict": "proved"}, {"verdict": "unknown"}]), verdict_of(None)
    ('proved', None)
    """
    if checks is None:
        return None
    verdicts = {c["verdict"] for c in checks}
    return "refuted" if "refuted" in verdicts else "proved" if "proved" in verdicts else "unknown"
