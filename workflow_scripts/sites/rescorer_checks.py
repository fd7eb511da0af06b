"""The values inside a re-scorer's manifest and its fold models' model.json, type and range, each
refusal one InputError naming the file and the field's path. sites/rescorer_manifest.py runs them
while the workflow parses (preflight) and again where a job loads the folder, so a bad value
stops the run before any scoring, not as a traceback after it.

    manifest_sha256   the sha256 of the manifest's own content (canonical JSON of every other
                      field), recorded by the writer: a hand edit is refused (a manifest written
                      before it carries none and is read as it was)
    thresholds        numbers in [0, 1] (null: no site to tune on); NaN named as NaN
    tree              trees and n_features counts; constant a probability
    source            source a string, source_sites and source_candidates counts, source_scores
                      names, base_model null or provenance's facts: source, and files each with
                      path, bytes and sha256 (sites/base_match.py compares the sha256)
    results           answer a string, counts and calls objects, recommended null or
                      {predictor: a site predictor (RECOMMENDABLE), ...}
    fold<i>.json      the model section by the schema (as `model.d_model`, naming the fold file),
                      max_tokens a positive count, input_columns and score_channels of the
                      columns errorseq feeds, tokenizer an object; the window and remote code
                      are checked in sites/deep_transfer.py
"""

from __future__ import annotations

import hashlib
import json
import re

from workflow_scripts.errors import InputError
from workflow_scripts.json_fields import field, typed
from workflow_scripts.sites.predictors import RECOMMENDABLE  # one name per predictor, defined there

DIGEST = "manifest_sha256"
SHA256 = re.compile(r"[0-9a-f]{64}")
CALL_INPUTS = ("score", "splice_type")  # models/call_inputs.CALL_INPUT_COLUMNS
SCORE_CHANNELS = ("donor_scores", "acceptor_scores")  # models/score_channels.SCORE_CHANNEL_COLUMNS


def manifest_digest(document: dict) -> str:
    """sha256 of the manifest's content without its own digest, as canonical JSON."""
    content = {key: value for key, value in document.items() if key != DIGEST}
    return hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def check_digest(document: dict, source: str) -> None:
    if DIGEST not in document:
        return
    recorded = typed(document[DIGEST], str, source, DIGEST)
    if recorded != manifest_digest(document):
        raise InputError(
            source,
            DIGEST,
            "differs from the sha256 of the manifest's content: it was edited after site_calls wrote it",
        )


def count(container: dict, key: str, source: str, where: str, positive: bool = False) -> int:
    value = field(container, key, int, source, where)
    if value < (1 if positive else 0):
        name = f"{where}.{key}" if where else key
        raise InputError(source, name, f"{value}: want a count ({'> 0' if positive else '>= 0'})")
    return value


def probability(value: object, source: str, name: str) -> float:
    if isinstance(value, float) and value != value:
        raise InputError(source, name, "NaN: want a number in [0, 1]")
    number = typed(value, float, source, name)
    if not 0 <= number <= 1:
        raise InputError(source, name, f"{value}: want a number in [0, 1]")
    return number


def check_thresholds(part: dict, source: str) -> None:
    for name in part:
        by_type = field(part, name, dict, source, "thresholds")
        for splice_type, value in by_type.items():
            if value is not None:
                probability(value, source, f"thresholds.{name}.{splice_type}")


def check_source(facts: dict, source: str) -> None:
    field(facts, "source", str, source, "source")
    count(facts, "source_sites", source, "source")
    if "source_candidates" in facts:
        count(facts, "source_candidates", source, "source")
    if facts.get("source_scores") is not None:
        for number, name in enumerate(field(facts, "source_scores", list, source, "source")):
            typed(name, str, source, f"source.source_scores[{number}]")
    base = facts.get("base_model")
    if base is not None:
        check_base_model(typed(base, dict, source, "source.base_model"), source, "source.base_model")


def check_base_model(base: dict, source: str, where: str) -> None:
    field(base, "source", str, source, where)
    for number, fact in enumerate(field(base, "files", list, source, where) if "files" in base else []):
        name = f"{where}.files[{number}]"
        typed(fact, dict, source, name)
        field(fact, "path", str, source, name)
        count(fact, "bytes", source, name)
        digest = field(fact, "sha256", str, source, name)
        if not SHA256.fullmatch(digest):
            raise InputError(source, f"{name}.sha256", f"want a sha256 (64 hex digits), found {digest!r}")
    if base.get("made_by") is not None:
        check_base_model(typed(base["made_by"], dict, source, f"{where}.made_by"), source, f"{where}.made_by")


def check_results(results: dict, source: str) -> None:
    if "answer" in results:
        field(results, "answer", str, source, "results")
    for key in ("counts", "calls"):
        if key in results:
            field(results, key, dict, source, "results")
    chosen = results.get("recommended")
    if chosen is not None:
        typed(chosen, dict, source, "results.recommended")
        predictor = field(chosen, "predictor", str, source, "results.recommended")
        if predictor not in RECOMMENDABLE:
            raise InputError(
                source,
                "results.recommended.predictor",
                f"{predictor!r}: not a predictor a re-scorer recommends ({', '.join(RECOMMENDABLE)})",
            )


def check_tree_counts(part: dict, source: str) -> None:
    count(part, "trees", source, "tree")
    if part.get("file") is not None:
        count(part, "n_features", source, "tree", positive=True)
    elif part.get("constant") is not None:
        probability(part["constant"], source, "tree.constant")


def check_fold_config(config: dict, source: str) -> None:
    """A fold model's model.json (module docstring), before any model is built from it."""
    from workflow_scripts.config.sections import complete_section

    check_no_remote_code(config, source)
    window_flank(config, source)
    try:
        complete_section("model", dict(field(config, "model", dict, source)))
    except InputError as error:  # the schema names `model.<key>` of "config": here it is the fold's
        raise InputError(source, error.field, error.message) from None
    count(config, "max_tokens", source, "", positive=True)
    field(config, "tokenizer", dict, source)
    for key, known in (("input_columns", CALL_INPUTS), ("score_channels", SCORE_CHANNELS)):
        names = config.get(key) or []
        typed(names, list, source, key)
        for name in names:
            if name not in known:
                raise InputError(source, key, f"{name!r}: errorseq feeds only {', '.join(known)}")
        if len(set(names)) != len(names):
            raise InputError(source, key, "a column named twice")


def window_flank(config: dict, source: str) -> int:
    """The flank of the windows a model.json says its model was trained on: `window` holds flank,
    length = 2 * flank + 1 and site_offset = flank."""
    window = field(config, "window", dict, source)
    flank = field(window, "flank", int, source, "window")
    length = field(window, "length", int, source, "window")
    offset = field(window, "site_offset", int, source, "window")
    if flank < 0 or length != 2 * flank + 1 or offset != flank:
        raise InputError(
            source,
            "window",
            f"flank {flank}, length {length}, site_offset {offset}: want length 2 * flank + 1 "
            "and the site at offset flank",
        )
    return flank


def check_no_remote_code(config: dict, source: str) -> None:
    """A transferred model.json may not ask for code from outside the re-scorer."""
    for section in ("model", "tokenizer"):
        part = field(config, section, dict, source)
        if part.get("trust_remote_code"):
            raise InputError(
                source,
                f"{section}.trust_remote_code",
                "a transferred model may not run code from its Hugging Face folder: refused",
            )
