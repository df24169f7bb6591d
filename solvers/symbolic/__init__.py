"""Mask programs verified for every sequence length: symbolic masks in Z3 (issue 13).

:mod:`.terms` (symbolic integers and Booleans), :mod:`.trace` (running a mask program on
them), and the claims built on the formulas. Independent of the concrete engine: nothing
here evaluates a mask on a grid, except the re-check of a counterexample.
"""
