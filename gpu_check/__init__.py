"""gpu_check."""
