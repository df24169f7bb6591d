"""Z3 encodings: masks, tasks, leak walks, merges, the one Z3 answer type (``prove``)."""
