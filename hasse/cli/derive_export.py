"""What `hasse derive --export` writes (issue 25): the merged mask (npy), the merged task (json), or a
FlexAttention file (flex) with its all-n proof, its check at this n and a task file for `hasse gpu-check`.

A built-in family whose merge is its closed-form layout exports the layout's factory (the file of
:mod:`theory.flex` for its recipe), proved equal to the symbolic layout for every n by
``hasse equiv``; any other family exports a table of its merged mask (:mod:`theory.flex_table`),
valid at its n only. Either file is run once at this n and compared with the derived mask.
"""

from __future__ import annotations

import os

from hasse.theory.errors import InputError


def export(result, recipe, values, args) -> dict:
    """Write ``--export npy|json|flex`` to ``--out``; the report's ``export`` entry (files, proofs, checks)."""
    out = args.out
    if args.export == "npy":
        import io

        import numpy as np

        buf = io.BytesIO()
        np.save(buf, result.task.mask)
        _write(out, buf.getvalue())
        return {"format": "npy", "file": out, "positions": result.task.size}
    if args.export == "json":
        import json

        from hasse.theory.inputs.tasks import task_to_dict

        _write(out, (json.dumps(task_to_dict(result.task)) + "\n").encode())
        return {"format": "json", "file": out, "positions": result.task.size}
    return _export_flex(result, recipe, values, args)


def _write(path: str, data: bytes) -> None:
    """``data`` to ``path`` atomically (theory.atomic_file: never onto an input, one line on failure)."""
    from hasse.theory.atomic_file import atomic_output

    with atomic_output(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)


def flex_source(recipe) -> str:
    """The text of ``theory/flex/<recipe.flex>.py``, the file --export flex copies."""
    from importlib import resources

    return resources.files("hasse.theory.flex").joinpath(f"{recipe.flex}.py").read_text(encoding="utf-8")


def _export_flex(result, recipe, values, args) -> dict:
    import json

    from hasse.theory.inputs.tasks import task_to_dict
    from hasse.theory.version import __version__

    if recipe is None or recipe.flex is None or result.layout is None or not result.layout_same:
        return _export_table(result, args)  # no formula at these values: the merged mask at this n
    out = args.out
    if not out.endswith(".py"):
        raise InputError(f"--export flex writes a Python file: --out must end in .py, got {out}")
    call_args = recipe.flex_args(values)
    n = values.get("n", result.task.tokens)
    call = f"make_mask_mod({n}{', ' + call_args if call_args else ''})"
    size_call = f"positions({n}{', ' + call_args if call_args else ''})"
    symbolic = recipe.symbolic(values)
    assume = " ".join(f"--assume {a}" for a in recipe.assume)
    header = (f"# Written by `hasse derive {args.family} --export flex --out {os.path.basename(out)}` (hasse "
              f"{__version__}).\n"
              f"# The derived mask of {result.family}: {result.layout} ({result.task.size} positions at n = {n}).\n"
              f"# Proved equal to it for every n: hasse equiv \"{os.path.basename(out)}:{proof_call(symbolic)}\" "
              f"{symbolic}"
              f"{' ' + assume if assume else ''}\n"
              f"# Train with it:\n"
              f"#   from torch.nn.attention.flex_attention import create_block_mask, flex_attention\n"
              f"#   size = {size_call}\n"
              f"#   block_mask = create_block_mask({call}, B=None, H=None, Q_LEN=size, KV_LEN=size)\n"
              f"#   out = flex_attention(q, k, v, block_mask=block_mask)  # q, k, v: (batch, heads, size, dim)\n")
    _write(out, (header + flex_source(recipe)).encode())
    task_file = out[:-3] + ".task.json"
    task = task_to_dict(result.layout_task)
    task["mask"] = f"{os.path.basename(out)}:{call}"
    _write(task_file, (json.dumps(task) + "\n").encode())
    entry = {"format": "flex", "file": out, "task_file": task_file, "call": call, "positions": result.task.size,
             "gpu_check": f"hasse gpu-check {task_file} --trust-code --backend flex"}
    entry["equiv"] = _equiv(out, symbolic, recipe.assume, args.timeout) if not args.no_proof else None
    entry["at_n"] = _check_file_at_n(out, call, result.layout_task)
    return entry


def _export_table(result, args) -> dict:
    """A family without formulas (or values without a layout): the merged mask as a table, valid at this n."""
    import json

    from hasse.theory.flex_table import table_source
    from hasse.theory.inputs.tasks import task_to_dict

    out = args.out
    if not out.endswith(".py"):
        raise InputError(f"--export flex writes a Python file: --out must end in .py, got {out}")
    t = result.task
    header = (f"# Written by `hasse derive {args.family} --export flex --out {os.path.basename(out)}`.\n"
              f"# Train with it: size = positions({t.tokens}); block_mask = create_block_mask(make_mask_mod("
              f"{t.tokens}), B=None, H=None, Q_LEN=size, KV_LEN=size)\n")
    _write(out, (header + table_source(t.mask, tokens=t.tokens, label=result.family)).encode())
    call = f"make_mask_mod({t.tokens})"
    task_file = out[:-3] + ".task.json"
    task = task_to_dict(t)
    task["mask"] = f"{os.path.basename(out)}:{call}"
    _write(task_file, (json.dumps(task) + "\n").encode())
    return {"format": "flex", "file": out, "task_file": task_file, "call": call, "positions": t.size,
            "table": True, "equiv": None, "at_n": _check_file_at_n(out, call, t),
            "gpu_check": f"hasse gpu-check {task_file} --trust-code --backend flex"}


def proof_call(symbolic: str) -> str:
    """``make_mask_mod(k=3, …)``: the factory called with the values the symbolic spec fixes, so that the
    rest (n, the free parameters) is traced symbolic and the two sides quantify over the same values.

    >>> proof_call("mtp_registers:k=3"), proof_call("block_mixture_merged:blocks=1+2,context=block")
    ('make_mask_mod(k=3)', "make_mask_mod(blocks=(1, 2), context='block')")
    >>> proof_call("butterfly")
    'make_mask_mod'
    """
    from hasse.theory.catalog import get_entry, parse_spec, parse_value  # the catalogue: every entry registered

    name, raw = parse_spec(symbolic)
    entry = get_entry(name, "task")
    items = []
    for key, text in raw.items():
        value = parse_value(entry.param(key), text, symbolic)
        items.append(f"{key}={tuple(value)!r}" if isinstance(value, (list, tuple)) else f"{key}={value!r}")
    return f"make_mask_mod({', '.join(items)})" if items else "make_mask_mod"


def _equiv(path: str, symbolic: str, assume, timeout) -> dict:
    from hasse.solvers.symbolic.claim_runs import prove_equivalent
    from hasse.solvers.symbolic.resolve import parse_assume

    call = proof_call(symbolic)
    command = (f"hasse equiv \"{path}:{call}\" {symbolic}" +
               "".join(f" --assume {a}" for a in assume))
    from hasse.theory.atomic_file import guard_outputs

    try:
        with guard_outputs({}):  # the file this command just wrote, read back on purpose
            run = prove_equivalent(f"{path}:{call}", symbolic, assume=parse_assume(list(assume)),
                                   timeout=timeout)
    except InputError as exc:
        return {"command": command, "verdict": "unknown", "reason": str(exc)}
    v = run.verdict
    return {"command": command, "verdict": v.verdict, "statement": v.statement, "reason": v.reason,
            "recheck": v.recheck, "seconds": round(v.seconds, 3)}


def _check_file_at_n(path: str, call: str, layout) -> dict:
    """The written file run at this n (as `hasse analyze FILE.py:CALL --n SIZE` does) against the layout's mask."""
    import numpy as np

    from hasse.theory.atomic_file import guard_outputs
    from hasse.theory.inputs.masks import read_grid
    from hasse.theory.inputs.reading import Reading
    from hasse.theory.user_code import ARGUMENT

    try:
        with guard_outputs({}):  # the file this command just wrote, read back on purpose
            grid = read_grid(f"{path}:{call}", Reading(n=layout.size, code=ARGUMENT))[0].matrix
    except InputError as exc:
        return {"verdict": "unknown", "reason": str(exc)}
    same = bool(np.array_equal(np.asarray(grid, dtype=bool), layout.mask))
    return {"verdict": "equal" if same else "differs", "positions": layout.size,
            "differences": int((np.asarray(grid, dtype=bool) != layout.mask).sum())}
