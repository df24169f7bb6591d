"""Proof certificates: the format, what a result claims, combining shards, verifying."""
