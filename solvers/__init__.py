"""hasse.solvers."""
