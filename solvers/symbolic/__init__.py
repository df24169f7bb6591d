"""Mask programs verified for every sequence length: symbolic masks in Z3.

:mod:`.terms` (symbolic integers and Booleans), :mod:`.trace` (running a mask program on
them), :mod:`.mask` and :mod:`.tasks` (what the claims read), :mod:`.catalog` (the
catalogue's forms), :mod:`.claims` (the claims built on the formulas) and :mod:`.recheck`
(every verdict run again on the program). Independent of the concrete engine: nothing
here evaluates a mask on a grid, except the re-check of a counterexample.
"""
