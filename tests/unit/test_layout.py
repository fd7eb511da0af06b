"""workflow_scripts/layout.py declares the per-run file layout once: the rules and the package
name another rule's files through it, never by writing the path again."""

from __future__ import annotations

import re
from pathlib import Path

from workflow_scripts import layout
from workflow_scripts.config.runs import site_runs

ROOT = Path(__file__).resolve().parents[2]
# the paths another rule or a reading of a finished run opens (docstrings and comments may name them)
DECLARED = (
    layout.GENOME_INDEX,
    layout.GENOME_SEQUENCE,
    layout.ANNOTATION_DIR,
    layout.SHARDS_DIR,
    layout.CALLS_TABLE,
    layout.CALLS_SUMMARY,
    layout.SITES_DIR,
    layout.REGIONS_TABLE,
    layout.RESCORED_DIR,
    layout.SUMMARY_DIR,
    layout.SITE_EXPERIMENT + "_fold",
    *layout.FOLD_RUN_FILES,
)


def code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines of `path` that are code: no comments, no docstring or help text lines."""
    lines = []
    in_docstring = False
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        stripped = line.strip()
        quotes = stripped.count('"""')
        if in_docstring or stripped.startswith('"""'):
            if quotes % 2 == 1:
                in_docstring = not in_docstring
            continue
        code = stripped.split("#", 1)[0]
        if "help=" in code or "InputError(" in code:
            continue
        lines.append((number, code))
    return lines


def test_rules_and_package_name_the_layout_only_through_layout_py():
    files = [*sorted((ROOT / "rules").glob("*.smk")), ROOT / "Snakefile"]
    files += [p for p in sorted((ROOT / "workflow_scripts").rglob("*.py")) if p.name != "layout.py"]
    written = []
    for path in files:
        for number, code in code_lines(path):
            for declared in DECLARED:
                if re.search(rf"[\"'/]{re.escape(declared)}", code):
                    written.append(f"{path.relative_to(ROOT)}:{number}: {declared}")
    assert written == []


def test_site_runs_are_named_as_the_layout_names_fold_runs():
    config = {"sites": {"model": True, "folds": 3}, "calling": {"start": "annotation"}, "train": {"seed": 7}}
    runs = site_runs(config, {})
    assert list(runs) == [layout.site_fold_run(fold) for fold in (1, 2, 3)]
    assert [layout.run_dir(run) for run in runs][0] == "results/site_candidates_fold1"


def test_run_files_and_annotation_tables():
    assert layout.run_file(layout.WINDOWS) == "results/{experiment}/windows.parquet"
    assert layout.run_file(layout.MODEL_WEIGHTS, "a_fold1") == "results/a_fold1/model/model.pt"
    assert layout.annotation_table("gene_clusters") == "results/annotation/gene_clusters.parquet"


# the fold-run files by name (layout.FOLD_RUN_FILES); outside layout.py only the rules that write
# them (their own outputs) and rule_files (site_calls' inputs) name them
FOLD_RUN_NAMES = ("WINDOWS", "BUCKET_MANIFEST", "MODEL_WEIGHTS", "MODEL_CONFIG", "PREDICTIONS")


def test_site_modules_read_fold_runs_through_the_paths_they_are_given():
    """sites/ and site_calls take layout.FoldRunFiles; none joins a run folder with a file name."""
    files = [
        *sorted((ROOT / "workflow_scripts" / "sites").glob("*.py")),
        ROOT / "workflow_scripts/rules/site_calls.py",
    ]
    joined = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, code in code_lines(path)
        if re.search(rf"layout\.({'|'.join(FOLD_RUN_NAMES)})\b", code)
    ]
    assert joined == []


def test_fold_run_files_name_every_file_site_calls_reads():
    files = layout.fold_run_files("results/site_candidates_fold2")
    assert files.run == "results/site_candidates_fold2"
    assert (files.windows, files.manifest, files.weights, files.model_config, files.predictions) == tuple(
        f"results/site_candidates_fold2/{name}" for name in layout.FOLD_RUN_FILES
    )
