"""Baselines the test windows' classes are matched on by design, so that beating them shows nothing.

make_calls draws decoy TN for the FN (calling.negatives decoy, calling/negatives.py): only
candidate positions that carry the canonical dinucleotide (GT after a donor, AG before an
acceptor), each the unused candidate whose base score is nearest to one FN's score of the same
splice type. In an FN vs TN experiment on such TN the base score, alone or with the splice type,
and the site dinucleotide rank FN against TN near chance by construction: "the model beats the
base score" there is true by design, not a finding. The trees on the score profiles and the
k-mer model are the comparisons that count.

The comparison report names these baselines (`matched_by_design`: {baseline: why}, {} for any
other experiment or TN strategy, or calls whose TN strategy is unknown: a user's calls table);
the evaluate log, the answer sentence and summary.tsv (column matched_by_design) say so.
"""

from __future__ import annotations

import polars as pl

from workflow_scripts.comparison_fields import BASE_SCORE, BASE_SCORE_TYPE, DINUCLEOTIDE

DECOY = "decoy"  # make_calls' tn_strategy of a decoy TN
MATCHED_SCORE = (
    "each decoy TN is the candidate whose base score is nearest to one FN's, of the same splice type"
)
REASONS = {
    BASE_SCORE: MATCHED_SCORE,
    BASE_SCORE_TYPE: MATCHED_SCORE,
    DINUCLEOTIDE: "every decoy TN carries the canonical dinucleotide (GT donor, AG acceptor), as almost every FN does",
}
SUMMARY = (
    "by design, the decoy TN are matched to the FN scores (make_calls, calling.negatives decoy), "
    "so beating {names} is true by construction"
)


def is_decoy_fn_vs_tn(test: pl.DataFrame) -> bool:
    """Whether the errors are FN and the correct windows all decoy TN (make_calls' tn_strategy); a
    missing value (a TN of unknown origin) is not a decoy."""
    if not {"pred_type", "tn_strategy"} <= set(test.columns):
        return False
    errors, correct = test.filter(pl.col("label") == 1), test.filter(pl.col("label") == 0)
    return (
        errors.height > 0
        and correct.height > 0
        and every(errors["pred_type"] == "FN")
        and every(correct["pred_type"] == "TN")
        and every(correct["tn_strategy"] == DECOY)
    )


def every(condition: pl.Series) -> bool:
    return bool(condition.fill_null(False).all())


def matched_by_design(test: pl.DataFrame) -> dict[str, str]:
    """{baseline: why it ranks near chance by construction} for these test windows (the docstring)."""
    return dict(REASONS) if is_decoy_fn_vs_tn(test) else {}


def by_design_text(names: list[str]) -> str:
    """'by design, the decoy TN are matched to the FN scores (...), so beating X and Y is true by
    construction'; `names` already as the reader reads them."""
    shown = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return SUMMARY.format(names=shown)
