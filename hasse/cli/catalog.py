"""``hasse catalog``: every built-in entry with its parameters and one line."""

from __future__ import annotations

from hasse.views.output import add_json_arguments, ascii_aware, emit_json, json_header
from hasse.cli.parsers import add_command

HELP = "list the built-in masks and their parameters"
KINDS = ("mask", "task", "family", "stack")  # the order of the listing (within a kind: the catalogue's order)


def register(sub) -> None:
    p = add_command(sub, "catalog", HELP, "List every built-in entry: its spec pattern, what it is, and its "
                    "parameters. Use the spec wherever a MASK is expected, e.g. `hasse analyze butterfly:n=4`.")
    add_json_arguments(p)
    p.add_argument("--verbose", "-v", action="store_true", help="also explain each parameter")
    p.set_defaults(run=ascii_aware(run))


def run(args) -> int:
    from hasse.theory.catalog import entries

    items = sorted(entries(), key=lambda e: KINDS.index(e.kind) if e.kind in KINDS else len(KINDS))
    if (args.json or args.out) and emit_json(args, {**json_header("catalog"), "entries": [
            {"name": e.name, "kind": e.kind, "usage": e.usage(), "summary": e.summary,
             "params": [{"name": p.name, "kind": p.kind, "default": p.default, "required": p.required,
                         "help": p.help, "choices": list(p.choices), "aliases": list(p.aliases)}
                        for p in e.params]}
            for e in items]}):
        return 0
    by_kind: dict[str, list] = {}
    for e in items:
        by_kind.setdefault(e.kind, []).append(e)
    for kind, group in by_kind.items():
        heading = {"mask": "masks (use as MASK)", "task": "tasks (use as TASK)",
                   "family": "task families (use as FAMILY)",
                   "stack": "model presets, a mask per layer (use as --stack, or as MASK of analyze)"}.get(kind, f"{kind} entries")
        print(("\n" if kind != items[0].kind else "") + heading + ":")
        width = max(len(e.usage()) for e in group)
        for e in group:
            print(f"  {e.usage():<{width}}  {e.summary}")
            if args.verbose:
                for p in e.params:
                    default = "required" if p.required else f"default {p.default}"
                    print(f"  {'':<{width}}    {p.name}: {p.help} ({default})")
    if args.out:
        print(f"JSON written to {args.out}")
    return 0
