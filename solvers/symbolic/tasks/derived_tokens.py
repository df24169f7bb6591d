"""Symbolic task builders for the derived layouts of theory.tasks.derived_tokens (issue 25).

Both trace the catalogue's own rule factories (:func:`theory.masks.mtp_registers.make_mtp_registers`,
:func:`theory.masks.block_mixture.make_block_mixture`) with ``n`` symbolic when the spec leaves it
out; the other parameters are constants (they set how many streams there are):

======================== ============================ ==============================================
task                     size                         holds(p, t) / predicts(p, t)
======================== ============================ ==============================================
mtp_registers (k given)  k·n − k(k+1)/2               content p < n−1 holds x_p, predicts x_{p+1};
                                                      register S_d + i (d = 2 … k) predicts x_{i+d}
block_mixture_merged     Σ (2n − L) (block),          clean u of a stream at s holds x_{p−s};
(blocks, context given)  n − min L + m·n (causal)     query t of a stream at s predicts x_{p−s}
======================== ============================ ==============================================

``S_d = (d−1)·n − (d−1)d/2`` (:func:`theory.masks.mtp_registers.stream_start`); the streams of
the block mixture are :func:`theory.masks.block_mixture.segments` with ``n`` a Z3 term.
"""

from __future__ import annotations

import z3

from hasse.solvers.symbolic.mask import N
from hasse.solvers.symbolic.programs import RuleTaskProgram, TaskProgram
from hasse.solvers.symbolic.tasks.families import _inside_tokens, _int_or_none, _task, _traced
from hasse.theory.errors import InputError
from hasse.theory.masks.block_mixture import make_block_mixture, require_context
from hasse.theory.masks.mtp_registers import make_mtp_registers, stream_start
from hasse.theory.params import require_int_list, require_positive


def _with_program(spec, name, values, mask, factory, fixed, holds, predicts):
    """:func:`_task` with the program that can sample (:class:`~solvers.symbolic.programs.RuleTaskProgram`)."""
    task = _task(spec, name, values, mask, holds, predicts)
    if isinstance(mask.program, TaskProgram):
        mask.program = RuleTaskProgram(spec, task.concrete, factory, fixed)
    return task


def _segments(n, blocks, context):
    """:func:`theory.masks.block_mixture.segments` with ``n`` a Z3 term (starts linear in ``n``)."""
    out, start = [], z3.IntVal(0)
    if context == "causal":
        smallest = min(blocks)
        out.append(("clean", smallest, start, n - smallest))
        start = n - smallest
    for size in blocks:
        if context == "block":
            out.append(("clean", size, start, n - size))
            start = start + n - size
        out.append(("query", size, start, n))
        start = start + n
    return out, start


def _mtp_registers(spec, name, values):
    if values.get("k") is None:
        raise InputError("mtp_registers needs k given (e.g. mtp_registers:k=3): k sets how many register "
                         "streams there are; n may be left out")
    k_value = require_positive("k", values["k"])
    mask = _traced(spec, make_mtp_registers, params={N: _int_or_none(values, N), "k": k_value},
                   size=lambda n, k: k_value * n - k_value * (k_value + 1) // 2,
                   streams=lambda n, k: (("x", z3.IntVal(0)),) + tuple((f"r{d}", stream_start(n, d))
                                                                     for d in range(2, k_value + 1)))
    n = mask.n
    starts = [stream_start(n, d) for d in range(2, k_value + 2)]  # S_2 … S_{k+1} (S_{k+1} = size)

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), p < n - 1, t == p)

    def predicts(p, t):
        cases = [z3.And(p < n - 1, t == p + 1)]
        for d in range(2, k_value + 1):
            start, end = starts[d - 2], starts[d - 1]
            cases.append(z3.And(p >= start, p < end, t == p - start + d))
        return z3.And(_inside_tokens(n, t), z3.Or(cases))

    return _with_program(spec, name, values, mask, make_mtp_registers, {"k": k_value}, holds, predicts)


def _block_mixture_merged(spec, name, values):
    if values.get("blocks") is None:
        raise InputError("block_mixture_merged needs blocks given (e.g. blocks=2+4): they set the streams; "
                         "n may be left out")
    blocks = require_int_list("blocks", values["blocks"])
    if len(set(blocks)) != len(blocks) or min(blocks) < 1:
        raise InputError(f"block sizes must be distinct positive integers, got {'+'.join(map(str, blocks))}")
    context = require_context(values.get("context", "block"))
    mask = _traced(spec, make_block_mixture, params={N: _int_or_none(values, N), "blocks": blocks,
                                                     "context": context},
                   size=lambda n, blocks, context: _segments(n, blocks, context)[1],
                   streams=lambda n, blocks, context: tuple(
                       (f"{'c' if kind == 'clean' else 'q'}{size}", start)
                       for kind, size, start, _ in _segments(n, blocks, context)[0]))
    n = mask.n
    parts, _ = _segments(n, blocks, context)

    def within(kind, p, t):
        return z3.Or([z3.And(p >= start, p < start + length, t == p - start)
                      for kind_, _, start, length in parts if kind_ == kind])

    def holds(p, t):
        return z3.And(_inside_tokens(n, t), within("clean", p, t))

    def predicts(p, t):
        return z3.And(_inside_tokens(n, t), within("query", p, t))

    return _with_program(spec, name, values, mask, make_block_mixture, {"blocks": blocks, "context": context},
                         holds, predicts)


BUILDERS: dict = {  # task name -> builder(spec, name, values) -> SymbolicTask (as families._BUILDERS)
    "mtp_registers": _mtp_registers,
    "block_mixture_merged": _block_mixture_merged,
}
