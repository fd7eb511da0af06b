"""A re-scorer corrects the base model it was trained on: a transfer whose source genome was
scored by other base-model weights is refused, naming both.

Both sides are provenance's `base_model` facts (evaluation/provenance.py): source "weights" with
the files' sha256, family and species, or a scores table `made_by` such weights (calling.start
scores with calling.base_model.weights). When either side's base model is not known by its
weights (a scores table of an unnamed model, calls given, a job run by hand), nothing can be compared: `base_mismatch`
returns None and the caller says so in its log.
"""

from __future__ import annotations

from pathlib import PurePath

from workflow_scripts.errors import InputError

WEIGHTS = "weights"


def named_only(facts: dict | None) -> dict | None:
    """The base model's facts with each file's name for its path (files, identical_files and
    made_by's): what a re-scorer records, so no machine's folders travel with it."""
    if not facts:
        return facts
    named = dict(facts)
    if isinstance(facts.get("files"), list):
        named["files"] = [
            {**fact, "path": PurePath(str(fact["path"])).name}
            if isinstance(fact, dict) and "path" in fact
            else fact
            for fact in facts["files"]
        ]
    if isinstance(facts.get("identical_files"), list):
        named["identical_files"] = [
            [PurePath(str(path)).name for path in group] for group in facts["identical_files"]
        ]
    if isinstance(facts.get("made_by"), dict):
        named["made_by"] = named_only(facts["made_by"])
    return named


def weights_of(facts: dict | None) -> dict | None:
    """The weights' facts: the base model run, or the one a scores table was made by (made_by)."""
    if facts and facts.get("source") != WEIGHTS:
        facts = facts.get("made_by")
    return facts if facts and facts.get("source") == WEIGHTS else None


def weights_digests(facts: dict | None) -> list[str] | None:
    facts = weights_of(facts)
    if facts is None:
        return None
    return sorted(str(fact["sha256"]) for fact in facts.get("files", []))


def describe_base(facts: dict) -> str:
    files = ", ".join(str(fact["path"]).rsplit("/", 1)[-1] for fact in facts.get("files", [])[:2])
    more = len(facts.get("files", [])) - 2
    listed = files + (f" and {more} more" if more > 0 else "")
    return f"{facts.get('family', 'unknown')} models trained on {facts.get('species', 'unknown')} ({listed})"


def base_mismatch(source: dict | None, here: dict | None) -> str | None:
    """The refusal's text when both base models are known by their weights and differ, else None."""
    theirs, ours = weights_digests(source), weights_digests(here)
    if theirs is None or ours is None or theirs == ours:
        return None
    theirs_facts, ours_facts = weights_of(source), weights_of(here)
    assert theirs_facts is not None and ours_facts is not None
    return (
        f"the source genome was scored by {describe_base(theirs_facts)}, this run by {describe_base(ours_facts)}: "
        "a re-scorer corrects only the base model it was trained on (unset sites.transfer: without one, "
        "calling.start regions gives the base model's own calls at calling.threshold)"
    )


def check_same_base(source: dict | None, here: dict | None, path: str) -> bool:
    """Refuse a mismatch (InputError naming the re-scorer's field); True when both were compared."""
    why = base_mismatch(source, here)
    if why is not None:
        raise InputError(path, "source.base_model", why)
    return weights_digests(source) is not None and weights_digests(here) is not None
