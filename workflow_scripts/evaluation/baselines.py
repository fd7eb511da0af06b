"""Baselines the error model must beat, fitted on the train split and scored on the test windows.

Each baseline returns a test score where higher means "more likely an error" (label 1):

* base_score: the base model's `score` column. Its direction depends on the experiment (for FP vs
  TP a high score is more often correct; for FN vs TN a low score is the error), so the sign is
  chosen on the TRAIN split (the one giving ROC-AUC >= 0.5 there), never on the test split.
* base_score_type: the base score together with the splice type the model also sees (a logistic
  regression on logit(score), is-donor and their product, fitted on train): FP rates differ by
  splice type, so a model given the type could beat base_score on the type alone.
* score_profile_tree: gradient-boosted trees on the base model's donor and acceptor score profiles
  around the site and the splice type (profile_tree.py; only where the windows carry the profiles).
* kmer: a logistic regression on 1..k-mer counts divided by the window length (each feature then
  scaled by its train standard deviation so the penalty treats k-mer sizes alike), class_weight
  balanced, its strength C picked on the validation split's ROC-AUC from C_GRID. (As C goes to 0
  the ranking tends to that of the class-balanced mean difference of the scaled features, so the
  grid's small end is a limit, not a cut: weak k-mer signal spread over thousands of features
  often validates best there.)
* chance: one constant score (ROC-AUC 0.5, PR-AUC = prevalence).
* length (leak detector): the window length, oriented on train like base_score.
* dinucleotide (leak detector): the intron's two bases at the site (GT after a donor, AG before an
  acceptor, in the window's reading direction, as in calling.motifs), scored by the train split's
  error rate of that dinucleotide (shrunk towards the train prevalence by PRIOR_WINDOWS windows).

Where the site sits in a window: a `site_offset` column (0-based), when the table has one.
Otherwise a window of a calls table is centred on its site unless extraction clipped it at a gene
or chromosome end; a clipped window (shorter than the longest window of the table) does not say
which end was cut, so its site is unknown and its dinucleotide score is the train prevalence,
carrying no information (the length detector measures clipping instead). Windows from a
sequences table (no `position` column) are taken as centred on base (length - 1) // 2.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from workflow_scripts.metrics import roc_auc

C_GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
FALLBACK_C = 1e-3  # when the validation split cannot rank (empty, or one class)
PRIOR_WINDOWS = 1.0
SITE_OFFSET_COLUMN = "site_offset"
UNKNOWN_SITE = "unknown"
BASE_CODES = np.full(256, 4, dtype=np.uint8)  # 4 = not A/C/G/T (N): k-mers over it are not counted
for _code, _bases in enumerate(("Aa", "Cc", "Gg", "Tt")):
    for _base in _bases:
        BASE_CODES[ord(_base)] = _code


class BaselineUnavailable(Exception):
    """This baseline cannot be scored on this table; the message says why."""


# ---- orientation and simple scores -----------------------------------------------------------------
def orientation_on_train(train_labels, train_values) -> int:
    """+1 when higher values go with errors on the train split (ROC-AUC >= 0.5), else -1."""
    auc = roc_auc(train_labels, train_values)
    if auc is None:
        raise BaselineUnavailable("the train split has one class, so the direction cannot be learned")
    return 1 if auc >= 0.5 else -1


def oriented_column(train: pl.DataFrame, test: pl.DataFrame, column: str) -> tuple[np.ndarray, dict]:
    """A numeric column as a score, with the sign that ranks errors first on train."""
    for split, frame in (("train", train), ("test", test)):
        if column not in frame.columns:
            raise BaselineUnavailable(f"the windows have no '{column}' column")
        missing = frame[column].null_count()
        if missing:
            raise BaselineUnavailable(f"'{column}' is missing for {missing} {split} windows")
    values = train[column].cast(pl.Float64).to_numpy()
    sign = orientation_on_train(train["label"].to_numpy(), values)
    train_auc = roc_auc(train["label"].to_numpy(), sign * values)
    return sign * test[column].cast(pl.Float64).to_numpy(), {"orientation": sign, "train_roc_auc": train_auc}


SCORE_EPSILON = 1e-6  # keeps logit(score) finite at scores of exactly 0 or 1


def score_type_features(frame: pl.DataFrame) -> np.ndarray:
    """logit(score), is-donor and their product, one row per window."""
    score = np.clip(frame["score"].cast(pl.Float64).to_numpy(), SCORE_EPSILON, 1 - SCORE_EPSILON)
    logit = np.log(score / (1 - score))
    donor = (frame["splice_type"] == "donor").to_numpy().astype(float)
    return np.column_stack([logit, donor, logit * donor])


def score_and_type_scores(train: pl.DataFrame, test: pl.DataFrame) -> tuple[np.ndarray, dict]:
    """base_score_type: what the base score and the splice type alone tell, fitted on train."""
    for column in ("score", "splice_type"):
        for split, frame in (("train", train), ("test", test)):
            if column not in frame.columns:
                raise BaselineUnavailable(f"the windows have no '{column}' column")
            if frame[column].null_count():
                raise BaselineUnavailable(
                    f"'{column}' is missing for {frame[column].null_count()} {split} windows"
                )
    labels = train["label"].to_numpy()
    if labels.min() == labels.max():
        raise BaselineUnavailable("the train split has one class")
    fitted = LogisticRegression(class_weight="balanced", max_iter=1000).fit(
        score_type_features(train), labels
    )
    train_auc = roc_auc(labels, fitted.decision_function(score_type_features(train)))
    return fitted.decision_function(score_type_features(test)), {
        "coefficients": [float(c) for c in fitted.coef_[0]],
        "features": ["logit(score)", "donor", "logit(score) x donor"],
        "train_roc_auc": train_auc,
    }


def chance_scores(n: int) -> np.ndarray:
    return np.zeros(n)


# ---- dinucleotide at the site ----------------------------------------------------------------------
def site_indices(frame: pl.DataFrame, full_length: int) -> np.ndarray:
    """0-based index of the site in each window's sequence; -1 where it cannot be known."""
    if SITE_OFFSET_COLUMN in frame.columns:
        return frame[SITE_OFFSET_COLUMN].fill_null(-1).to_numpy().astype(np.int64)
    lengths = frame["length"].to_numpy().astype(np.int64)
    centre = (lengths - 1) // 2
    if "position" not in frame.columns:
        return centre
    return np.where(lengths == full_length, centre, -1)


def site_dinucleotides(frame: pl.DataFrame, full_length: int) -> np.ndarray:
    """The intron's two bases at each site (donor: after it, acceptor: before it, else the site and
    the next base), upper-case; UNKNOWN_SITE where the site or the pair is outside the window."""
    site = site_indices(frame, full_length)
    if "splice_type" in frame.columns:
        splice_type = frame["splice_type"].to_numpy()
        first = np.where(
            splice_type == "donor", site + 1, np.where(splice_type == "acceptor", site - 2, site)
        )
    else:
        first = site
    lengths = frame["sequence"].str.len_bytes().to_numpy()
    known = (site >= 0) & (first >= 0) & (first + 2 <= lengths)
    pairs = [
        sequence[start : start + 2].upper() if ok else UNKNOWN_SITE
        for sequence, start, ok in zip(frame["sequence"].to_list(), first.tolist(), known.tolist())
    ]
    return np.array(pairs, dtype=object)


def category_rate_scores(train_categories, train_labels, test_categories) -> tuple[np.ndarray, dict]:
    """Each test category's train error rate, shrunk to the prevalence; unseen/unknown: prevalence."""
    labels = np.asarray(train_labels, dtype=float)
    prevalence = float(labels.mean())
    categories, inverse = np.unique(np.asarray(train_categories, dtype=str), return_inverse=True)
    errors = np.bincount(inverse, weights=labels, minlength=categories.size)
    counts = np.bincount(inverse, minlength=categories.size)
    rates = dict(zip(categories.tolist(), (errors + PRIOR_WINDOWS * prevalence) / (counts + PRIOR_WINDOWS)))
    rates.pop(UNKNOWN_SITE, None)
    scores = np.array(
        [rates.get(category, prevalence) for category in np.asarray(test_categories, dtype=str)]
    )
    return scores, {
        "train_error_rate": {key: float(value) for key, value in sorted(rates.items())},
        "train_prevalence": prevalence,
    }


def dinucleotide_scores(train: pl.DataFrame, test: pl.DataFrame, full_length: int) -> tuple[np.ndarray, dict]:
    train_pairs = site_dinucleotides(train, full_length)
    test_pairs = site_dinucleotides(test, full_length)
    scores, details = category_rate_scores(train_pairs, train["label"].to_numpy(), test_pairs)
    details["test_unknown_site"] = int(np.sum(test_pairs == UNKNOWN_SITE))
    return scores, details


# ---- k-mer logistic regression ---------------------------------------------------------------------
def kmer_counts(sequences: list[str], max_k: int) -> sparse.csr_matrix:
    """(windows, 4 + 16 + ... + 4**max_k) counts of every 1..max_k-mer; k-mers with N are skipped.

    Columns for size k start at sum(4**j for j < k); a k-mer's column is its base-4 number (A=0,
    C=1, G=2, T=3, first base most significant).
    """
    if max_k < 1:
        raise ValueError("max_k must be at least 1")
    lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
    bases = BASE_CODES[np.frombuffer("".join(sequences).encode("ascii"), dtype=np.uint8)].astype(np.int64)
    window = np.repeat(np.arange(len(sequences)), lengths)
    code = np.zeros(bases.size, dtype=np.int64)
    usable = np.ones(bases.size, dtype=bool)
    blocks = []
    for k in range(1, max_k + 1):
        n_starts = bases.size - k + 1
        code = code[:n_starts] * 4 + np.minimum(bases[k - 1 :], 3)
        usable = usable[:n_starts] & (bases[k - 1 :] < 4) & (window[k - 1 :] == window[:n_starts])
        ones = np.ones(int(usable.sum()))
        block = sparse.csr_matrix(
            (ones, (window[:n_starts][usable], code[usable])), shape=(len(sequences), 4**k)
        )
        block.sum_duplicates()
        blocks.append(block)
    return sparse.csr_matrix(sparse.hstack(blocks, format="csr"))


def kmer_frequencies(frame: pl.DataFrame, max_k: int) -> sparse.csr_matrix:
    """k-mer counts divided by each window's length (so length itself carries no signal)."""
    counts = kmer_counts(frame["sequence"].to_list(), max_k)
    lengths = np.maximum(frame["sequence"].str.len_bytes().to_numpy().astype(float), 1.0)
    return sparse.csr_matrix(sparse.diags(1.0 / lengths) @ counts)


def fit_logistic(features, labels, c: float) -> LogisticRegression:
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=2000)
    return model.fit(features, labels)


def fit_with_chosen_c(train_x, train_y, val_x, val_y) -> tuple[LogisticRegression, dict]:
    """The fit of C_GRID with the best validation ROC-AUC (the smaller C on ties); FALLBACK_C
    when the validation split cannot rank."""
    if val_y.size == 0 or val_y.min() == val_y.max():
        reason = "no windows" if val_y.size == 0 else "one class"
        return fit_logistic(train_x, train_y, FALLBACK_C), {
            "C": FALLBACK_C,
            "c_choice": f"fixed {FALLBACK_C}: the validation split has {reason}",
        }
    fits = {c: fit_logistic(train_x, train_y, c) for c in C_GRID}
    val_auc = {c: roc_auc(val_y, fit.decision_function(val_x)) for c, fit in fits.items()}
    best = max(C_GRID, key=lambda c: (val_auc[c], -c))
    return fits[best], {
        "C": best,
        "c_choice": "validation roc_auc",
        "val_roc_auc": {str(c): auc for c, auc in val_auc.items()},
    }


def kmer_scores(
    train: pl.DataFrame, val: pl.DataFrame, test: pl.DataFrame, max_k: int
) -> tuple[np.ndarray, dict]:
    """Train on train (C from val), return the test windows' decision values (log-odds)."""
    train_y = train["label"].to_numpy().astype(np.int64)
    if train_y.size == 0 or train_y.min() == train_y.max():
        raise BaselineUnavailable("the train split has no windows or one class")
    train_x = kmer_frequencies(train, max_k)
    scaler = StandardScaler(with_mean=False).fit(train_x)
    train_x, test_x = scaler.transform(train_x), scaler.transform(kmer_frequencies(test, max_k))
    val_x = scaler.transform(kmer_frequencies(val, max_k)) if val.height else None  # unused when empty
    model, details = fit_with_chosen_c(train_x, train_y, val_x, val["label"].to_numpy().astype(np.int64))
    return model.decision_function(test_x), {"k": [1, max_k], **details}
