"""FlexAttention mask_mod factories that `hasse derive --export flex` writes (issue 25).

Each module here is a standalone file, copied as it stands into the user's project: plain
Python with no import of hasse (and no torch at import time), exactly two public functions,

- ``positions(n, **params) -> int``: Q_LEN = KV_LEN to give ``create_block_mask``;
- ``make_mask_mod(n, **params) -> mask_mod(b, h, q_idx, kv_idx)``: the derived mask.

A list parameter (a masked set, an order's ranks) is a tensor or a sequence (a sequence is
turned into a torch tensor inside the factory). ``hasse equiv FILE.py:make_mask_mod LAYOUT``
proves the file equal to the derived layout for every n (theory.derivations).
"""
