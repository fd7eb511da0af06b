"""One named environment channel: the cluster's (training/cluster_env.py). Every other value a job
reads is on its command line, as its stage declares it, and provenance travels with the data
(evaluation/records.py): a read of any other ERRORSEQ_* variable in the package fails here."""

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "workflow_scripts"
CHANNEL = "ERRORSEQ_CLUSTER_ENV"
# a name in quotes: what os.environ / os.getenv / a shell export would be given
NAMED = re.compile(r"""["'](ERRORSEQ_[A-Z0-9_]+)["']""")


def env_names() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in NAMED.findall(path.read_text()):
            found.setdefault(name, []).append(str(path.relative_to(PACKAGE)))
    return found


def test_the_cluster_environment_is_the_one_named_env_channel():
    found = env_names()
    assert set(found) == {CHANNEL}, found
    assert found[CHANNEL] == ["training/cluster_env.py"]


def test_no_job_reads_the_run_facts_variable_or_the_workflows_config():
    sources = {path: path.read_text() for path in PACKAGE.rglob("*.py")}
    assert not [path for path, text in sources.items() if "RUN_FACTS" in text or "run_facts" in text]
