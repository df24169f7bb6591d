"""Training–inference consistency for every n (design.md §3), for designs whose correspondence is position-wise."""

from __future__ import annotations

import time
from typing import Callable, Sequence

import z3

from hasse.solvers.smt.prove import SAT, UNSAT
from hasse.solvers.symbolic.claims.concrete import _recheck_small
from hasse.solvers.symbolic.claims.dense import prove_dense
from hasse.solvers.symbolic.claims.obligations import _earlier, _failing
from hasse.solvers.symbolic.claims.solve import _conditions_of, _solve, _task_pairs, _value, _values, smallest_model
from hasse.solvers.symbolic.claims.statement import _ptext, _statement, _uncertain
from hasse.solvers.symbolic.claims.verdict import DEFAULT_TIMEOUT, RECHECK_UPTO, SymbolicVerdict
from hasse.solvers.symbolic.mask import SymbolicMask
from hasse.solvers.symbolic.task import SymbolicTask
from hasse.theory.consistency import check_consistency
from hasse.theory.errors import InputError
from hasse.theory.spec import parse_spec
from hasse.theory.tasks.families import block_family
from hasse.theory.verdicts import PROVED, REFUTED, UNKNOWN, disagreement, not_rechecked


def prove_consistent(mask: SymbolicMask | SymbolicTask, *, queries: Callable | None = None,
                     upstream: Callable | None = None, order: Callable | None = None,
                     concrete: Callable | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                     assume: Sequence = (), recheck_upto: int = RECHECK_UPTO) -> SymbolicVerdict:
    """Each query's upstream in training equals its upstream at inference, for every ``n``.

    What is proved, exactly: the inference side is stated in the training task's positions
    by the caller — ``queries(p)`` (the supervised positions that stand for inference
    nodes), ``upstream(p, k)`` (position ``k`` stands for a node upstream of ``p``'s
    inference node, ``p`` itself included) and, optionally, ``order(a, b)`` (among those,
    ``a`` depends on ``b`` at inference). With ``A* `` the limit of the training mask:

    1. ``M or I`` is transitive (:func:`prove_dense`), so ``A* = M or I`` — first-order;
       a mask that is not dense gives **unknown** (its limit is not written here);
    2. for every query ``p`` and position ``k``: ``A(p, k) ⇔ upstream(p, k)``;
    3. with ``order``: for every query ``p`` and ``a, b`` upstream of it:
       ``A(a, b) ⇔ order(a, b)`` — the upstream diagrams are then the same labelled
       order, position for position (inputs and labels are the training positions' own,
       which the caller's correspondence must keep: it is not checked here).

    This is design.md §3's consistency (an equivalent training node for every inference
    node) for designs whose correspondence is position-wise, as Block Two-Stream's is:
    :func:`block_two_stream_consistency` states it. ``concrete(n, **params)`` returns
    ``(train Task, inference Tasks)`` for :func:`theory.consistency.check_consistency`,
    the re-check. Given a :class:`SymbolicTask` instead of a mask (and no ``queries``),
    the statement is the task family's (:func:`task_consistency`).
    """
    start = time.perf_counter()
    if isinstance(mask, SymbolicTask):
        parts = task_consistency(mask)
        mask = mask.mask
        queries, upstream = queries or parts["queries"], upstream or parts["upstream"]
        order, concrete = order or parts["order"], concrete or parts["concrete"]
    if queries is None or upstream is None:
        raise TypeError("prove_consistent needs queries= and upstream= with a mask")
    conds = _conditions_of(mask, extra=assume)
    statement = _statement(mask, mask.params, conds, "every query's upstream equals its inference upstream")
    failed = _failing("consistent", statement, start, timeout, [(mask, conds, mask.params)])
    if failed is not None:
        return _earlier(failed, mask.n, lambda below: prove_consistent(
            mask, queries=queries, upstream=upstream, order=order, concrete=concrete, timeout=timeout,
            assume=[*assume, *below], recheck_upto=0))
    dense = prove_dense(mask, timeout=timeout, assume=assume, recheck_upto=0)
    if dense.verdict != PROVED:
        why = "the mask is not dense" if dense.verdict == REFUTED else f"density: {dense.reason}"
        return SymbolicVerdict("consistent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                               f"{why}, so its limit is not first-order here (use hasse consistent at one n)")
    p, k, a, b = z3.Ints("p k a b")
    checks = [("upstream", conds + [mask.inside(p, k), queries(p)] + mask.facts([(p, k)] + _task_pairs([p, k]))
               + [mask.attends(p, k) != upstream(p, k)], [p, k])]
    if order is not None:
        checks.append(("order", conds + [mask.inside(p, a, b), queries(p), upstream(p, a), upstream(p, b)]
                       + mask.facts([(a, b), (p, a), (p, b)]) + [mask.attends(a, b) != order(a, b)], [p, a, b]))
    for what, query, terms in checks:
        status, model, reason, _ = _solve(query, timeout)
        if status == UNSAT:
            continue
        if status != SAT:
            return SymbolicVerdict("consistent", UNKNOWN, statement, time.perf_counter() - start, None, None,
                                   f"{what}: the solver said {reason or status}")
        model, note = smallest_model(query, mask.n, mask.params, timeout, model)
        n, params = _values(model, mask)
        pos = [_value(model, x) for x in terms]
        x, y = (pos[0], pos[1]) if what == "upstream" else (pos[1], pos[2])
        training = z3.is_true(model.eval(mask.attends(x, y), model_completion=True))
        cx = {"n": n, "params": params, "query": pos[0], "positions": pos, "pair": [x, y], "check": what,
              "training": training, "inference": not training}
        recheck = _concrete_consistency(concrete, n, params, False)
        return SymbolicVerdict("consistent", REFUTED, statement, time.perf_counter() - start, cx, recheck,
                               f"at n = {n}{_ptext(params)}, query {pos[0]}: {x} "
                               f"{'depends' if training else 'does not depend'} on {y} in training but "
                               f"{'not at inference' if training else 'does at inference'}"
                               + _uncertain(cx, note))
    recheck = _recheck_small(mask, conds, recheck_upto, lambda n, ps: _concrete_consistency(concrete, n, ps, True)) \
        if concrete is not None else None
    return SymbolicVerdict("consistent", PROVED, statement, time.perf_counter() - start, None, recheck,
                           "dense, and every query's upstream" + (" and its order" if order else "")
                           + " equal the inference task's")


def block_two_stream_consistency(mask: SymbolicMask, variant: str = "chain", block=None) -> dict:
    """``queries``, ``upstream`` and ``order`` of the ``block`` inference family in Block Two-Stream positions.

    Content ``C_i`` at ``i < c = n − l``, query ``Q_t`` at ``c + t``. At inference (``B_b``,
    ``b = t // l``) ``Q_t`` sees ``C_j`` for ``j < b·l`` and the queries of its block
    (``u <= t`` for chain, all for clique); content is causal, queries see every content
    position of their task and no query of another block.
    """
    n, l = mask.n, mask.params.get("block", mask.params.get("l")) if block is None else z3.IntVal(int(block))
    if l is None:
        raise ValueError(f"{mask.name}: no symbolic block parameter")
    c = n - l
    chain = variant == "chain"

    def is_query(x):
        return x >= c

    def same_block(x, y):  # two query positions, same block; chain: y no later than x
        return z3.And((x - c) / l == (y - c) / l, (y <= x) if chain else z3.BoolVal(True))

    def upstream(x, y):
        return z3.Or(x == y, z3.And(y < c, y < ((x - c) / l) * l), z3.And(is_query(y), same_block(x, y)))

    def order(x, y):
        return z3.Or(x == y,
                     z3.And(z3.Not(is_query(x)), z3.Not(is_query(y)), y <= x),
                     z3.And(is_query(x), z3.Not(is_query(y))),
                     z3.And(is_query(x), is_query(y), same_block(x, y)))

    return {"queries": is_query, "upstream": upstream, "order": order}


def task_consistency(task: SymbolicTask) -> dict:
    """``queries``, ``upstream``, ``order`` and ``concrete`` for a task family with a symbolic consistency statement.

    Block Two-Stream (either variant) and ``bad_block_query_history`` (chain), against the
    ``block`` inference family; any other task: InputError (use ``hasse consistent`` at one n).
    """
    source = task.name.split(" through ")[0]
    try:
        name, values = parse_spec(source)
    except Exception:
        name, values = source, {}
    if name not in ("block_two_stream", "bad_block_query_history") or " through " in task.name:
        raise InputError(f"{task.name}: no symbolic consistency statement for this task "
                         f"(use hasse consistent TRAIN_TASK --inference FAMILY at one n)")
    variant = str(values.get("variant", "chain")) if name == "block_two_stream" else "chain"
    fixed = values.get("block") if "block" not in task.mask.params else None
    parts = block_two_stream_consistency(task.mask, variant, fixed)

    def concrete(n, **params):
        train = task.concrete(n, **params)
        block = params.get("block", values.get("block"))
        return train, block_family(n, int(block), variant)

    parts["concrete"] = concrete if task.concrete is not None else None
    return parts


def _concrete_consistency(concrete, n: int, params: dict, expect: bool) -> str:
    if concrete is None:
        return not_rechecked("no concrete form given")
    try:
        train, inference = concrete(n, **params)
        report = check_consistency(train, inference)
    except Exception as exc:
        return not_rechecked(f"{type(exc).__name__}: {exc}")
    if report.consistent == expect:
        return "confirmed"
    return disagreement(f"the concrete engine at n = {n}{_ptext(params)} finds the training task "
           f"{'consistent' if report.consistent else 'inconsistent'} ({report.checked} nodes checked)")
