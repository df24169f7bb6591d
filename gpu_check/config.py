"""Configuration of the attention stacks that gpu_check builds: one frozen dataclass.

Definitions. A *stack* is ``layers`` pre-norm Transformer blocks of width ``width``
with ``heads`` attention heads (design.md §9). Weights are drawn from the seeded
PyTorch default initialisation, always on the CPU in float64 and then moved, so a
seed gives the same weights on every device. Checks run in float64 on the CPU and
float32 on CUDA (:func:`dtype_for`).

CPU threads: the stacks are small, and on a busy machine several intra-op threads
wait on each other (measured: 20-40x slower with 2 threads while another process
held one of the 2 cores). The command line, the benchmark and the tests therefore
run CPU checks inside :func:`torch_threads` with one thread.

torch is imported inside the functions, so importing this module is cheap.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from hasse.theory.errors import InputError


@dataclass(frozen=True)
class StackConfig:
    """Shape and seed of one stack."""

    layers: int = 2  # L, number of Transformer blocks
    width: int = 16  # C, model width; every position carries a C-vector
    heads: int = 2  # H, attention heads; width must be a multiple of heads
    mlp_ratio: int = 2  # hidden width of each block's MLP is mlp_ratio * width
    seed: int = 0  # seeds every weight of the stack

    def __post_init__(self):
        if self.layers < 0:
            raise InputError(f"layers must be >= 0, got {self.layers}")
        if self.width < 1 or self.heads < 1 or self.width % self.heads:
            raise InputError(f"width {self.width} must be a positive multiple of heads {self.heads}")
        if self.mlp_ratio < 1:
            raise InputError(f"mlp_ratio must be >= 1, got {self.mlp_ratio}")

    @property
    def head_dim(self) -> int:
        """D = C / H, the width of one head."""
        return self.width // self.heads


def resolve_device(name: str = "auto") -> str:
    """``"cuda"`` or ``"cpu"``: ``auto`` picks CUDA when it is available.

    Raises InputError for ``cuda`` on a machine without a CUDA device.

    >>> resolve_device("cpu")
    'cpu'
    """
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cpu":
        return "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise InputError("--device cuda: no CUDA device is available (torch "
                             f"{torch.__version__}); use --device cpu or auto")
        return "cuda"
    raise InputError(f"unknown device {name!r}; expected auto, cpu or cuda")


def dtype_for(device: str):
    """float64 on the CPU (exact zeros are easy to read), float32 on CUDA.

    >>> dtype_for("cpu")
    torch.float64
    """
    import torch

    return torch.float64 if str(device).startswith("cpu") else torch.float32


@contextmanager
def torch_threads(count: int | None = 1):
    """Run the block with ``count`` intra-op CPU threads, then restore torch's previous setting.

    ``None`` leaves the setting alone.

    >>> import torch
    >>> before = torch.get_num_threads()
    >>> with torch_threads(1):
    ...     torch.get_num_threads()
    1
    >>> torch.get_num_threads() == before
    True
    """
    import torch

    if count is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
