"""keep_freed_memory: a buffer freed and allocated again is not faulted in again (page faults
counted by the kernel, not timed)."""

from __future__ import annotations

import subprocess
import sys

import pytest

FAULTS_OF_REUSE = """
import resource, sys
import numpy as np
from workflow_scripts.training.host_memory import keep_freed_memory
if sys.argv[1] == "keep":
    assert keep_freed_memory()
np.ones(50_000_000 // 8).sum()  # the first time: every page faults in
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(4):
    np.ones(50_000_000 // 8).sum()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def faults(mode: str) -> int:
    result = subprocess.run(
        [sys.executable, "-c", FAULTS_OF_REUSE, mode], capture_output=True, text=True, check=True
    )
    return int(result.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_a_freed_buffer_is_reused_without_faulting_its_pages_in_again():
    default, kept = faults("default"), faults("keep")
    assert default >= 50  # glibc unmaps each 50 MB buffer when freed: its pages fault in again
    assert kept * 20 < default
