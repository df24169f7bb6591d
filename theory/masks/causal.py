"""Causal attention: every query attends itself and every earlier key."""

from __future__ import annotations

from hasse.theory.mask import NamedMask, grid, named_mask, to_text  # grid: used by the examples
from hasse.theory.params import N, require_positive
from hasse.theory.spec import Entry


def causal_mask(q, k):
    """The causal rule: ``q`` attends ``k`` iff ``k <= q`` (the diagonal is included).

    >>> grid(causal_mask, 3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    return k <= q


def build(n: int) -> NamedMask:
    """The causal mask on ``n`` positions: ``M[q, k] = k <= q``.

    Parameters
    ----------
    n : number of positions, ``n >= 1``.

    Examples
    --------
    >>> build(3).matrix.astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    n = require_positive("n", n)
    return named_mask(causal_mask, n, f"causal:n={n}")


ENTRY = Entry("causal", "causal attention: k <= q", (N,), build)


def main() -> None:
    print(to_text(build(4)))


if __name__ == "__main__":
    main()
