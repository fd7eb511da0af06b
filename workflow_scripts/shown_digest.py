"""A rule's code digest as its `code` param (rules/common.smk rule_code), readable in the report.

Snakemake records and compares params by repr(), which stays the bare digest: an edit of the code
still reruns the rule, and runs recorded before still match. Its report shows str(): the digest
and what it is a digest of. Kept out of source_digest.py, which the training code imports: an
edit here changes no rule's digest.
"""

from __future__ import annotations


class ShownDigest(str):
    rule: str

    def __new__(cls, digest: str, rule: str) -> ShownDigest:
        shown = super().__new__(cls, digest)
        shown.rule = rule
        return shown

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # copy and pickle
        return str.__str__(self), self.rule

    def __str__(self) -> str:
        return f"{str.__str__(self)} (digest of the errorseq code the rule {self.rule} runs)"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)
