"""What each hybrid family does: per-operator document isolation (packed 3+4, with and without the cache) and schedules.

The figures of issue 23's closing note, reproduced in one run (seed 0, eager, 2 layers):

* per family, the operators whose own flow crosses documents in the packed scenario
  (documents 3+4, ``position_ids`` restarting, no ``attention_mask``) with the model's
  default cache and with ``use_cache=False``, and the first finding's layer and operator
  (``hasse audit FAMILY --scenario packed --documents 3+4 --backend eager [--no-cache]``);
* per family and schedule (decode, chunked prefill, prefix caching at n = 8): match, or
  whether the dependencies or only the values differ, with the largest difference
  (``hasse audit FAMILY --scenario decode|chunked_prefill|prefix_cache --n 8 --seeds 1``).

    python -m benchmarks.audit_findings
    python -m benchmarks.audit_findings --families lfm2 jamba
"""

from __future__ import annotations

import argparse
import sys
import warnings

HYBRIDS = ("qwen3_next", "kimi_linear", "lfm2", "mamba2", "jamba", "bamba", "falcon_h1", "granitemoehybrid",
           "nemotron_h", "zamba2", "recurrent_gemma", "rwkv")


def isolation(family: str, use_cache) -> str:
    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.report import Setup, audit
    from hasse.gpu_check.audit.scenarios import make_scenario

    result = audit(Setup(ModelSpec(family, 2, max_positions=16), make_scenario("packed", lengths=(3, 4)), seeds=1,
                         use_cache=use_cache), ["eager"])
    (b,) = result.backends
    crossing = sorted(f.op.path for f in b.operators if f.isolated is False)
    first = next((g for g in b.groups if not g.carried), None)
    found = f"first at layer {first.layer} through {first.operator}" if first else "clean"
    return f"{b.dtype}, {b.method}; crossing: {', '.join(crossing) or 'none measured'}; {found}"


def schedule(family: str, name: str) -> str:
    from hasse.gpu_check.audit.models import ModelSpec
    from hasse.gpu_check.audit.schedules import schedule_for_spec

    s = schedule_for_spec(ModelSpec(family, 2, max_positions=32), name, 8, seeds=1)
    if s.clean:
        return "match"
    flows = any(m.extra or m.lost for m in s.mismatches)
    return f"{'DEPENDENCIES' if flows else 'values'} differ ({s.difference.max():.1e}, from step {s.first_step})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.audit_findings", description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(HYBRIDS))
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    for family in args.families:
        print(f"{family}")
        print(f"  default cache:   {isolation(family, None)}")
        print(f"  use_cache=False: {isolation(family, False)}")
        print("  " + " | ".join(f"{name}: {schedule(family, name)}"
                                for name in ("decode", "chunked_prefill", "prefix_cache")), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
