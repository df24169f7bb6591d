"""The catalogue masks whose factories take numbers: their real rules traced (:func:`~solvers.symbolic.mask.from_rule`).

Each entry of :data:`_TRACED` names the factory, its integer parameters, the size and streams
of the layout and the side conditions the rule cannot state itself; the factory's
``require_*`` checks become the side conditions. :func:`_renamed` gives each parameter its
mathematical name (block -> l) and :func:`_statement` says the side conditions in words.
"""

from __future__ import annotations

from dataclasses import replace

import z3

from hasse.solvers.symbolic.conditions import describe_conditions
from hasse.solvers.symbolic.mask import N, SymbolicMask, from_rule
from hasse.solvers.symbolic.terms import SymInt, as_int
from hasse.theory.errors import InputError
from hasse.theory.masks.bd3lm import make_bd3lm
from hasse.theory.masks.bidirectional import bidirectional_mask  # noqa: F401  (hand form below: np.ones has no term)
from hasse.theory.masks.block_causal import make_block_causal
from hasse.theory.masks.block_two_stream import make_block_two_stream
from hasse.theory.masks.butterfly import make_butterfly
from hasse.theory.masks.causal import causal_mask
from hasse.theory.masks.chunked import make_chunked
from hasse.theory.masks.convolution import make_convolution
from hasse.theory.masks.prefix_lm import make_prefix_lm
from hasse.theory.masks.sliding_window import make_sliding_window, make_sliding_window_distance
from hasse.theory.masks.sparse_chains import make_sparse_block_causal, make_sparse_chunked, make_sparse_prefix_lm
from hasse.theory.masks.sparse_spanners import make_sparse_block_two_stream, make_sparse_butterfly, make_sparse_causal
from hasse.theory.params import require_block, require_non_negative, require_positive


# the Z3 name of each catalogue parameter (statements read "for all n >= 1 and all l >= 1 with l | n")
SYMBOL = {"n": "n", "window": "w", "block": "l", "d": "d", "chunk": "c", "prefix": "p", "width": "kw"}


def _causal(n):
    return causal_mask


def _bidirectional(n):
    def rule(q, k):  # the catalogue's rule builds np.ones of the broadcast shape: no term; this is it
        return True

    return rule


def _sliding_window(n, window):
    return make_sliding_window(window)


def _sliding_window_distance(n, d):
    return make_sliding_window_distance(d)


def _prefix_lm(n, prefix):
    return make_prefix_lm(prefix)


def _block_causal(n, block):
    n, block = require_block(n, block)
    return make_block_causal(block)


def _chunked(n, chunk):
    return make_chunked(chunk)


def _recurrent(n, chunk):
    chunk = require_non_negative("chunk", chunk)
    return make_chunked(where_zero(chunk, n))  # chunk = 0: one chunk of n (the causal prefix), as build_recurrent


def _conv(n, width):
    return make_convolution(width)  # one document; a spec giving documents is refused (_traced)


def where_zero(chunk, n):
    """``n`` where ``chunk == 0``, else ``chunk`` (a term: no branch, no path-local side condition)."""
    if isinstance(chunk, SymInt) or isinstance(n, SymInt):
        tracer = chunk.tracer if isinstance(chunk, SymInt) else n.tracer
        return SymInt(z3.If(as_int(chunk) == 0, as_int(n), as_int(chunk)), tracer)
    return chunk or n


def _bd3lm(n, block):
    return make_bd3lm(n, block)


def _block_two_stream(n, block, variant):
    return make_block_two_stream(n, block, variant)


def _butterfly(n):
    return make_butterfly(n)


def _sparse_causal(n, layers, tile):
    return make_sparse_causal(layers, tile)


def _sparse_butterfly(n, layers, tile):
    return make_sparse_butterfly(n, layers, tile)


def _sparse_block_two_stream(n, block, layers, tile):
    return make_sparse_block_two_stream(n, block, layers, tile)


def _sparse_block_causal(n, block, layers, units):
    n, block = require_block(n, block)
    return make_sparse_block_causal(block, layers, units)


def _sparse_chunked(n, chunk, layers, tile):
    return make_sparse_chunked(chunk, layers, tile)


def _sparse_prefix_lm(n, prefix, layers):
    return make_sparse_prefix_lm(prefix, layers)


# name -> (factory, integer parameters, size(n, **p), streams(n, **p), extra conditions(n, **p))
_TRACED: dict[str, tuple] = {
    "causal": (_causal, (), None, None, None),
    "bidirectional": (_bidirectional, (), None, None, None),
    "sliding_window": (_sliding_window, ("window",), None, None, None),
    "sliding_window_distance": (_sliding_window_distance, ("d",), None, None, None),
    "prefix_lm": (_prefix_lm, ("prefix",), None, None, lambda n, prefix: [prefix <= n]),
    "block_causal": (_block_causal, ("block",), None, None, None),
    "chunked": (_chunked, ("chunk",), None, None, None),
    "recurrent": (_recurrent, ("chunk",), None, None, None),
    "conv": (_conv, ("width",), None, None, None),
    "bd3lm": (_bd3lm, ("block",), lambda n, block: 2 * n, lambda n, block: (("xt", 0), ("x0", n)), None),
    "block_two_stream": (_block_two_stream, ("block",), lambda n, block, variant: 2 * n - block,
                         lambda n, block, variant: (("C", 0), ("Q", n - block)), None),
    "butterfly": (_butterfly, (), lambda n: 3 * n - 2, lambda n: (("F", 0), ("B", n - 1), ("P", 2 * n - 2)), None),
    "sparse_causal": (_sparse_causal, ("layers", "tile"), None, None, None),
    "sparse_butterfly": (_sparse_butterfly, ("layers", "tile"), lambda n, layers, tile: 3 * n - 2,
                         lambda n, layers, tile: (("F", 0), ("B", n - 1), ("P", 2 * n - 2)), None),
    "sparse_block_two_stream": (_sparse_block_two_stream, ("block", "layers", "tile"),
                                lambda n, block, layers, tile: 2 * n - block,
                                lambda n, block, layers, tile: (("C", 0), ("Q", n - block)), None),
    "sparse_block_causal": (_sparse_block_causal, ("block", "layers", "units"), None, None, None),
    "sparse_chunked": (_sparse_chunked, ("chunk", "layers", "tile"), None, None, None),
    "sparse_prefix_lm": (_sparse_prefix_lm, ("prefix", "layers"), None, None,
                         lambda n, prefix, layers: [prefix <= n]),
}


# concrete checks of a given value (the builder's own; relations between two given values below)
_CHECK = {"n": require_positive, "window": require_positive, "d": require_non_negative, "block": require_positive,
          "chunk": require_positive, "prefix": require_non_negative, "width": require_positive,
          "layers": require_positive, "tile": require_non_negative, "units": require_non_negative}


_CHECK_OF = {("recurrent", "chunk"): require_non_negative}


def _traced(name: str, source: str, given: dict, defaults: dict) -> SymbolicMask:
    factory, ints, size, streams, extra = _TRACED[name]
    lists = sorted(set(given) - {N, *ints, *defaults})  # documents=…: an index tensor these forms do not have
    if lists:
        raise InputError(f"{name} with {', '.join(lists)} has no symbolic form yet; leave {lists[0]} out "
                         "(the form for one document)")
    for key in (N, *ints):
        if key in given:
            _CHECK_OF.get((name, key), _CHECK[key])(key, given[key])
    if N in given and "block" in given:
        require_block(given[N], given["block"])
    if N in given and "prefix" in given and given["prefix"] > given[N]:
        raise InputError(f"prefix must be between 0 and n = {given[N]}, got {given['prefix']}")
    params: dict = {N: given.get(N)}
    params.update({key: given.get(key) for key in ints})
    params.update({key: given.get(key, default) for key, default in defaults.items()})
    extra_conditions = ()
    if extra is not None:
        n_term = z3.Int(N) if params[N] is None else z3.IntVal(params[N])
        terms = {k: (z3.Int(k) if params[k] is None else z3.IntVal(params[k])) for k in ints}
        extra_conditions = [c for c in extra(n_term, **terms) if not z3.is_true(z3.simplify(c))]
    mask = from_rule(source, factory, params=params, size=size, streams=streams, conditions=extra_conditions)
    return _renamed(mask, fixed_n=params[N] is not None)


def _renamed(mask: SymbolicMask, fixed_n: bool) -> SymbolicMask:
    """``mask`` with each parameter's Z3 variable renamed to its mathematical name (block -> l)."""
    pairs = [(term, z3.Int(SYMBOL.get(key, key))) for key, term in mask.params.items()
             if SYMBOL.get(key, key) != key]

    def sub(e):
        return z3.substitute(e, *pairs) if pairs and isinstance(e, z3.ExprRef) else e

    params = {key: sub(term) for key, term in mask.params.items()}
    conditions = _pruned([sub(c) for c in mask.conditions])
    return replace(mask, params=params, formula=sub(mask.formula), size=z3.simplify(sub(mask.size)) if fixed_n else sub(mask.size),
                   conditions=conditions,
                   obligations=[(sub(o), why) for o, why in mask.obligations],
                   streams=tuple((s, sub(z3.IntVal(p) if isinstance(p, int) else p)) for s, p in mask.streams),
                   statement=_statement(mask.n, params, conditions, fixed_n))


def _statement(n, params: dict, conditions: list, fixed_n: bool) -> str:
    """The side conditions in words; with ``n`` given, its name is left out (``for all w >= 1``)."""
    named = {str(v): v for v in params.values()}
    if not fixed_n:
        return describe_conditions(n, named, conditions)
    if not params:
        return f"at n = {n}"
    first, *rest = params.values()
    return describe_conditions(first, {str(v): v for v in rest}, conditions) + f" at n = {n}"


def _pruned(conditions: list) -> list:
    """``conditions`` without those the others imply (``If(c == 0, n, c) >= 1`` given ``n >= 1, c >= 0``)."""
    out = list(conditions)
    for c in list(reversed(out)):
        rest = [x for x in out if x is not c]
        solver = z3.Solver()
        solver.set("timeout", 1000)
        solver.add(*rest, z3.Not(c))
        if solver.check() == z3.unsat:
            out = rest
    return out
