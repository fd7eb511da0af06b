"""Fixtures shared by unit test modules: a copy of the package for the rule code digests' tests
(workflow_scripts/source_digest.py: test_source_digest.py, test_training_faults.py)."""

from __future__ import annotations

import shutil

import pytest

from workflow_scripts import source_digest


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the package that the digest reads instead of the real one (edited by the test)."""
    copy = tmp_path / "workflow_scripts"
    shutil.copytree(source_digest.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(source_digest, "PACKAGE_DIR", copy)
    caches = (source_digest.code_digest, source_digest.referenced_modules, source_digest.module_source)
    for cached in caches:
        cached.cache_clear()
    yield copy
    for cached in caches:
        cached.cache_clear()
