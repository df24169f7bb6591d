"""What the tracer refuses: an operation it does not model, one torch would refuse, a bound of its own.

Every refusal made while a program runs is recorded on the tracer of that run (the tracers
running now are :data:`RUNNING`, innermost last), so that a program that catches one and
returns anyway is refused too (:func:`~solvers.symbolic.trace.trace`).
"""

from __future__ import annotations

RUNNING: list = []  # the tracer of each program running now, innermost last (trace.trace pushes it for one run)


class Untraceable(Exception):
    """An operation the symbolic tracer does not model (the message names it).

    Every instance made while a program runs is recorded on its tracer (``Tracer.raised``):
    a program that returns after one was raised caught it (a ``try``/``except`` around
    traced code), and :func:`~solvers.symbolic.trace.trace` refuses it.
    """

    def __init__(self, *args):
        super().__init__(*args)
        if RUNNING:
            RUNNING[-1].raised.append(self)


class CannotRun(Untraceable):
    """torch (or numpy, for an ``np.*`` function) raises here: the program cannot run (exit 2).

    The message starts with "cannot run: " (added when it does not)."""

    def __init__(self, *args):
        if args and isinstance(args[0], str) and not args[0].startswith("cannot run"):
            args = (f"cannot run: {args[0]}",) + args[1:]
        super().__init__(*args)


class TraceLimit(Untraceable):
    """A bound of the tracer was reached (a loop over a symbolic value, too many paths): unknown, exit 3."""


class NotModelled(Untraceable, AttributeError):
    """An attribute of a symbolic value that is not modelled (an AttributeError too, for ``hasattr``)."""
