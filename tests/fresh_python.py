"""What a fresh interpreter has imported after running some code (for the tests that one part of the kit
never imports another)."""

from __future__ import annotations

import json
import subprocess
import sys


def modules_after(code: str, timeout: float) -> set[str]:
    """The names in ``sys.modules`` of a new ``python -c`` once ``code`` has run (it must exit cleanly)."""
    script = f"{code}\nimport json as _json, sys as _sys\nprint(_json.dumps(sorted(_sys.modules)))"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))
