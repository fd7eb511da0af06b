"""Freed host memory kept for the next step (CPU training).

glibc serves every allocation above its mmap threshold (at most 32 MiB) with a fresh mmap and
unmaps it when freed, and trims the heap's free top: a CPU training step of variable-length
batches then faults its large buffers (a dilated convolution's columns reach hundreds of MB) in
page by page again every step. On the base-training benchmark's batches that was 9 M page faults
and 26% of an epoch's CPU time in the kernel (docs/performance.md). `keep_freed_memory` has
glibc serve them from the heap and keep what is freed: the process's resident size stays at its
peak between steps, which it reaches anyway.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's malloc.h
NEVER_TRIM = 2**31 - 1  # mallopt takes an int


def keep_freed_memory() -> bool:
    """True where glibc took the settings (Linux); elsewhere nothing changes."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt)
        return False
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, NEVER_TRIM))
