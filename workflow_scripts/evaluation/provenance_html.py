"""The "Made from" block of summary.html: provenance.json (provenance.py) as a two-column table.

Hashes are shown by their first HASH_CHARS hex digits (the full sha256 is in the cell's tooltip
and in provenance.json); sizes in kB/MB.
"""

from __future__ import annotations

from html import escape

HASH_CHARS = 12
COUNTED_CLASSES = ("TP", "FP", "FN", "TN")


def size(n_bytes: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{n_bytes} B"


def file_fact(fact: dict | None, absent: str) -> str:
    if fact is None:
        return escape(absent)
    digest = fact["sha256"]
    return (
        f"<code>{escape(fact['path'])}</code> · {size(fact['bytes'])} · "
        f'<span title="sha256 {digest}">sha256 {digest[:HASH_CHARS]}…</span>'
    )


def base_model_cell(base_model: dict) -> str:
    files = "<br>".join(file_fact(fact, "") for fact in base_model["files"])
    return escape(base_model["source"]) + (f": {files}" if files else "")


def settings_text(settings: dict) -> str:
    """calling's settings the job was given (summarize: all five; site_calls: threshold and window)."""
    parts = []
    if "threshold" in settings:
        parts.append(f"threshold {settings['threshold']}")
    if "consensus_window" in settings:
        parts.append(f"a TP within ±{settings['consensus_window']} nt")
    if "negatives" in settings:
        negatives = settings["negatives"] or {}
        parts.append(
            f"negatives {negatives.get('kind')} ({negatives.get('per_error')} TN per FN, seed {negatives.get('seed')})"
        )
    if "biotypes" in settings:
        biotypes = settings["biotypes"]
        parts.append(f"biotypes {biotypes if isinstance(biotypes, str) else ', '.join(biotypes)}")
    if "transcripts" in settings:
        parts.append(f"transcripts {settings['transcripts']}")
    return ", ".join(parts)


def calling_cell(calling: dict, base_model: dict) -> str:
    if calling["settings"] is None:
        return escape(f"{base_model['source']} (calling.start {calling['start']})")
    return escape(f"calling.start {calling['start']}: {settings_text(calling['settings'])}")


def counts_cell(counts: dict) -> str:
    return "<br>".join(
        escape(f"{splice_type}: " + ", ".join(f"{kind} {per_class[kind]:,}" for kind in COUNTED_CLASSES))
        for splice_type, per_class in counts.items()
    )


def region_text(region: str | None) -> str:
    return "every gene of the annotation" if region is None else region


def errorseq_cell(source: dict) -> str:
    commit = source["commit"]
    shown = commit if commit == "unknown" else commit[:HASH_CHARS]
    modified = " (with uncommitted changes)" if source["modified"] else ""
    return escape(f"{source['version']}, commit {shown}{modified}")


def config_cell(config: dict) -> str:
    sections = ", ".join(f"<code>{escape(name)}</code>" for name in config.get("values", {})) or "none"
    digest = config["digest"]
    files = "".join(f"<br>{file_fact(fact, '')}" for fact in config.get("files", []))
    return f'<span title="sha256 {digest}">digest {digest[:HASH_CHARS]}…</span> of the sections {sections}{files}'


def hashing_cell(document: dict) -> str:
    hashing = document["hashing"]
    return escape(f"{document['created']}; {hashing['method']}")


def packages_cell(packages: dict) -> str:
    return escape(", ".join(f"{name} {version or 'not installed'}" for name, version in packages.items()))


def provenance_rows(document: dict) -> list[tuple[str, str]]:
    inputs = document["inputs"]
    rows = [("genome", file_fact(inputs["genome"], "none: a sequences table was given"))]
    if inputs["sequences"] is not None:
        rows.append(("sequences", file_fact(inputs["sequences"], "")))
    not_used = f"not used: {document['base_model']['source']}"
    rows += [
        ("annotation", file_fact(inputs["annotation"], not_used)),
        (
            "region",
            escape(not_used if document["region"] == "not applied" else region_text(document["region"])),
        ),
        ("base model", base_model_cell(document["base_model"])),
        ("calling", calling_cell(document["calling"], document["base_model"])),
        *([("calls", counts_cell(document["calling"]["counts"]))] if document["calling"]["counts"] else []),
        ("errorseq", errorseq_cell(document["errorseq"])),
        ("config", config_cell(document["config"])),
        *([("packages", packages_cell(document["packages"]))] if document.get("packages") else []),
        ("made", hashing_cell(document)),
    ]
    return rows


def provenance_section(document: dict) -> str:
    rows = provenance_rows(document)
    body = "".join(
        f'<tr><th class="name">{name}</th><td class="name">{cell}</td></tr>' for name, cell in rows
    )
    return f'<h3>Made from</h3>\n<div class="scroll"><table class="errorseq">{body}</table></div>\n'
