"""`make weights` (workflow_scripts/calling/weights_fetch.py): the base model's files present,
absent and corrupted; downloads from a server on 127.0.0.1 or a file:// URL, never outside."""

from __future__ import annotations

import hashlib
import http.server
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.train_fixtures import ROOT
from workflow_scripts.calling import weights_fetch
from workflow_scripts.calling.known_models import OPENSPLICEAI_10K
from workflow_scripts.calling.weights_fetch import fetch, main, published

GOOD = {"model_10000nt_rs10.pt": b"first model bytes", "model_10000nt_rs11.pt": b"second model bytes"}


@pytest.fixture
def sums(tmp_path) -> Path:
    """A sums file for two small stand-in files of a species 'toy'."""
    path = tmp_path / "toy.sha256"
    lines = [f"{hashlib.sha256(data).hexdigest()}  toy/{name}" for name, data in GOOD.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def publish(folder: Path, files: dict[str, bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving tmp_path/served; yields its folder URL, {species} filled."""
    root = tmp_path / "served"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}/{{species}}"
    httpd.shutdown()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in GOOD) if folder.is_dir() else []


def test_files_present_are_verified_and_nothing_is_fetched(tmp_path, sums):
    publish(tmp_path / "weights" / "toy", GOOD)
    nowhere = f"http://127.0.0.1:{closed_port()}/{{species}}"
    outcome = fetch("toy", tmp_path / "weights", url=nowhere, sums=sums)
    assert (outcome.kept, outcome.downloaded, outcome.copied, outcome.failed) == (2, 0, 0, [])


def test_absent_files_are_downloaded_and_checked(tmp_path, sums, server):
    served, url = server
    publish(served / "toy", GOOD)
    outcome = fetch("toy", tmp_path / "weights", url=url, sums=sums)
    assert (outcome.downloaded, outcome.failed) == (2, [])
    for name, data in GOOD.items():
        assert (tmp_path / "weights" / "toy" / name).read_bytes() == data
    assert leftovers(tmp_path / "weights" / "toy") == []


def test_a_corrupted_download_is_refused_and_not_left_under_its_name(tmp_path, sums, server):
    served, url = server
    publish(served / "toy", {**GOOD, "model_10000nt_rs11.pt": b"second model bytes, truncated?"})
    outcome = fetch("toy", tmp_path / "weights", url=url, sums=sums)
    assert outcome.downloaded == 1 and len(outcome.failed) == 1
    assert outcome.failed[0].startswith("model_10000nt_rs11.pt: sha256 ")
    assert "refused" in outcome.failed[0]
    folder = tmp_path / "weights" / "toy"
    assert not (folder / "model_10000nt_rs11.pt").exists()
    assert leftovers(folder) == []  # no .part file either


def test_a_corrupted_file_in_place_is_fetched_again(tmp_path, sums):
    folder = publish(tmp_path / "weights" / "toy", {**GOOD, "model_10000nt_rs10.pt": b"bit rot"})
    source = publish(tmp_path / "mirror" / "toy", GOOD)
    outcome = fetch("toy", tmp_path / "weights", source=source.parent, sums=sums)
    assert (outcome.kept, outcome.copied, outcome.failed) == (1, 1, [])
    assert (folder / "model_10000nt_rs10.pt").read_bytes() == GOOD["model_10000nt_rs10.pt"]


def test_a_local_folder_is_copied_from_either_layout_and_a_bad_copy_refused(tmp_path, sums):
    flat = publish(tmp_path / "flat", GOOD)  # the five files themselves, no species folder
    assert fetch("toy", tmp_path / "a", source=flat, sums=sums).copied == 2
    bad = publish(tmp_path / "bad" / "toy", {**GOOD, "model_10000nt_rs10.pt": b"other"})
    outcome = fetch("toy", tmp_path / "b", source=bad.parent, sums=sums)
    assert outcome.copied == 1 and "refused" in outcome.failed[0]
    assert not (tmp_path / "b" / "toy" / "model_10000nt_rs10.pt").exists()


def test_file_urls_work_too(tmp_path, sums):
    publish(tmp_path / "release" / "toy", GOOD)
    url = (tmp_path / "release").as_uri() + "/{species}"
    assert fetch("toy", tmp_path / "weights", url=url, sums=sums).downloaded == 2


def test_offline_the_command_prints_one_line_saying_where_to_put_the_files(tmp_path):
    dest = tmp_path / "weights" / "openspliceai"
    url = f"http://127.0.0.1:{closed_port()}/{{species}}"
    result = subprocess.run(
        [sys.executable, "-m", "workflow_scripts.calling.weights_fetch", "--dest", str(dest), "--url", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "5 of 5 OpenSpliceAI arabidopsis files" in lines[0]
    assert f"in {dest / 'arabidopsis'}/ by hand" in lines[0]
    assert "WEIGHTS_FROM=" in lines[0] and "Kuanhao-Chao/OpenSpliceAI/tree/394109a" in lines[0]
    assert not (dest / "arabidopsis").exists() or not any((dest / "arabidopsis").iterdir())


def test_a_source_that_is_not_a_folder_is_one_line(tmp_path, capsys):
    assert main(["--from", str(tmp_path / "nowhere"), "--dest", str(tmp_path / "w")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_published_models_check_against_the_shared_copies(tmp_path):
    """The real list: the five arabidopsis files from a local folder (the route this machine and
    CI take: make weights WEIGHTS_FROM=../shared/data/openspliceai), then found in place."""
    from tests.spliceai_fixtures import openspliceai_models

    shared = openspliceai_models("arabidopsis").parent
    dest = tmp_path / "weights"
    assert main(["--from", str(shared), "--dest", str(dest)]) == 0
    assert main(["--dest", str(dest), "--url", "http://127.0.0.1:1/{species}"]) == 0  # nothing fetched
    assert sorted(p.name for p in (dest / "arabidopsis").iterdir()) == [
        f.name for f in published("arabidopsis")
    ]


def test_the_list_in_the_repository_is_the_models_errorseq_recognises():
    for species in ("arabidopsis", "honeybee", "mane"):
        files = published(species)
        assert [f.name for f in files] == [f"model_10000nt_rs{seed}.pt" for seed in range(10, 15)]
        for file in files:
            folder, seeds = OPENSPLICEAI_10K[file.sha256]
            assert folder == species and file.name.removeprefix("model_10000nt_").removesuffix(".pt") in seeds
    assert weights_fetch.SUMS.parent == ROOT / "workflow_scripts" / "calling"


def test_make_weights_copies_from_a_folder(tmp_path):
    """The Makefile target calls the module (copied checkout: weights/ lands in it)."""
    from tests.spliceai_fixtures import openspliceai_models

    shared = openspliceai_models("arabidopsis").parent
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "workflow_scripts" / "calling", copy / "workflow_scripts" / "calling")
    shutil.copy(ROOT / "workflow_scripts" / "__init__.py", copy / "workflow_scripts")
    shutil.copy(ROOT / "Makefile", copy / "Makefile")
    result = subprocess.run(
        ["make", "weights", f"WEIGHTS_FROM={shared}", f"PYTHON={sys.executable}"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert len(list((copy / "weights" / "openspliceai" / "arabidopsis").glob("*.pt"))) == 5
