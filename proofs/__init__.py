"""hasse.proofs."""
