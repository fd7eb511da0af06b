"""Every config section as a typed dataclass, built from the section the schema completed.

config/config.schema.yaml holds every key's default, type, range and description; these classes
hold none of that, only each key's Python type (tests/unit/test_config_types.py checks the field
names and types against the schema, so a key added to one and not the other fails). Build one
with `typed_section(name, completed)` from a section `sections.complete_section` (or
`parse_rule_config`) completed; a key the schema leaves optional without a default is None when
absent. Nested objects (calling.paralogs, sites.tree, split.fractions, ...) are dataclasses of
their own; free-form objects (cluster.env) stay dicts. `train:` is config/train.py's TrainConfig.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workflow_scripts.config.section_class import Section
from workflow_scripts.config.sections import complete_section, complete_sections, parse_rule_config
from workflow_scripts.config.train import TrainConfig
from workflow_scripts.config.train_base import TrainBaseSection


@dataclass(frozen=True, kw_only=True)
class IndexGenomeSection(Section):
    iupac: str  # refuse | to_n


@dataclass(frozen=True, kw_only=True)
class ParalogsSection(Section):
    neighbours: int
    min_shared: float


@dataclass(frozen=True, kw_only=True)
class NegativesSection(Section):
    kind: str  # decoy | random
    per_error: float
    seed: int


@dataclass(frozen=True, kw_only=True)
class BaseModelSection(Section):
    weights: str | list[str] | None  # a directory or files; needed by calling.start annotation
    batch_size: int
    chunk_length: int
    precision: str
    device: str
    shards: int


@dataclass(frozen=True, kw_only=True)
class CallingSection(Section):
    start: str  # calls | scores | annotation | regions
    annotation: str | None
    biotypes: str | list[str]  # "all" or the biotypes kept
    transcripts: str
    region: str | None
    regions: str | None  # start regions: a BED of the regions to score
    paralogs: ParalogsSection
    scores: str | None
    threshold: float
    consensus_window: int
    negatives: NegativesSection
    base_model: BaseModelSection


@dataclass(frozen=True, kw_only=True)
class TreeSection(Section):
    """scikit-learn HistGradientBoostingClassifier's arguments (sites.tree)."""

    max_iter: int
    learning_rate: float
    max_leaf_nodes: int
    min_samples_leaf: int
    l2_regularization: float


@dataclass(frozen=True, kw_only=True)
class SitesSection(Section):
    floor: float
    peak_radius: int
    folds: int
    flank: int
    bootstrap_replicates: int
    seed: int
    tree: TreeSection
    transfer: str | None  # another genome's re-scorer folder
    model: bool


@dataclass(frozen=True, kw_only=True)
class BaseDataFractionsSection(Section):
    train: float
    validation: float
    test: float


@dataclass(frozen=True, kw_only=True)
class BaseDataSection(Section):
    """base_data: training data for the base model (base_training/dataset.py)."""

    enabled: bool
    context: int
    max_core: int
    merge_gap: int
    split: str  # clusters | chromosome
    fractions: BaseDataFractionsSection
    test_chromosomes: list[str | int]
    validation_chromosomes: list[str | int]
    seed: int
    canonical_only: bool
    folds: int
    fold: int


@dataclass(frozen=True, kw_only=True)
class EvaluateBaseSection(Section):
    """evaluate_base: base models on base_data's test blocks (base_training/evaluate.py)."""

    models: list[str]  # folders of .pt files; the rule passes their files as inputs, not through --config
    device: str  # auto | cpu | cuda
    max_blocks: int | None
    validation_blocks: int
    threshold: float
    window: int
    peak_radius: int
    bootstrap_replicates: int
    seed: int


@dataclass(frozen=True, kw_only=True)
class DemoSection(Section):
    seed: int
    n_genes: int
    calls_per_gene: int


@dataclass(frozen=True, kw_only=True)
class ExperimentSection(Section):
    """One `experiments:` entry as a run's rules get it (config/runs.py)."""

    name: str
    error_label: str  # FP | FN
    correct_label: str  # TP | TN
    fold: int | None  # set by the workflow with split.folds > 1: the fold the run tests

    def labels(self) -> dict[str, str]:
        """The error and correct labels (windows.parquet's notes, model.json)."""
        return {"error": self.error_label, "correct": self.correct_label}


@dataclass(frozen=True, kw_only=True)
class WindowSection(Section):
    flank: int


@dataclass(frozen=True, kw_only=True)
class FractionsSection(Section):
    train: float
    val: float
    test: float


@dataclass(frozen=True, kw_only=True)
class SplitSection(Section):
    fractions: FractionsSection
    seed: int
    by: str  # gene | chromosome
    folds: int
    test_chromosomes: list[str | int]
    val_chromosomes: list[str | int]


@dataclass(frozen=True, kw_only=True)
class TokenizerSection(Section):
    kind: str  # auto | nucleotide | bpe | hf
    k: int
    vocab_size: int
    min_frequency: int
    max_windows: int
    path: str | None


@dataclass(frozen=True, kw_only=True)
class BucketSection(Section):
    boundaries: str | list[int]  # "auto" or the buckets' inclusive upper token lengths
    n_buckets: int
    target_efficiency: float | None
    batch_sizes: list[int] | None
    max_tokens_per_batch: int | None
    max_batch_windows: int | None
    max_length: int


@dataclass(frozen=True, kw_only=True)
class ModelSection(Section):
    arch: str  # cnn | transformer
    d_model: int
    n_layers: int
    kernel_size: int
    n_heads: int
    ffn_multiplier: int
    dropout: float
    gradient_checkpointing: bool
    call_inputs: str | list[str]  # "auto" or the names
    score_channels: str | bool  # auto | on | off (YAML reads bare on/off as true/false)
    backbone: str  # builtin | hf
    path: str | None
    trust_remote_code: bool
    init: str
    hf_attention: str


@dataclass(frozen=True, kw_only=True)
class PretrainSection(Section):
    enabled: bool
    source: str
    genome_windows: int
    mask_fraction: float
    epochs: int
    lr: float
    max_steps: int | None


@dataclass(frozen=True, kw_only=True)
class EvaluateSection(Section):
    threshold: float | str  # a number, auto or precision:P
    batch_size: int
    kmer_max_k: int
    bootstrap_replicates: int
    bootstrap_seed: int
    profile_flank: int


@dataclass(frozen=True, kw_only=True)
class PredictSection(Section):
    calls: str | None
    genome: str | None
    name: str
    chunk_size: int


@dataclass(frozen=True, kw_only=True)
class ExplainSection(Section):
    method: str
    max_windows: int
    seed: int
    top_positions: int
    kmer_k: int
    top_kmers: int
    batch_size: int


@dataclass(frozen=True, kw_only=True)
class ClusterSection(Section):
    nccl_debug: str
    nccl_socket_ifname: str
    nccl_ib_disable: bool | None  # None: NCCL decides
    nccl_async_error_handling: bool
    rdzv_port: int
    collective_timeout_s: int
    env: dict[str, str | float | bool]


SECTION_TYPES: dict[str, type] = {
    "index_genome": IndexGenomeSection,
    "calling": CallingSection,
    "sites": SitesSection,
    "base_data": BaseDataSection,
    "evaluate_base": EvaluateBaseSection,
    "demo": DemoSection,
    "experiment": ExperimentSection,  # one item of `experiments` (sections.section_schema)
    "window": WindowSection,
    "split": SplitSection,
    "tokenizer": TokenizerSection,
    "bucket": BucketSection,
    "model": ModelSection,
    "pretrain": PretrainSection,
    "train": TrainConfig,
    "train_base": TrainBaseSection,
    "evaluate": EvaluateSection,
    "predict": PredictSection,
    "explain": ExplainSection,
    "cluster": ClusterSection,
}
LIST_SECTIONS = {"experiments": "experiment"}  # a list of another section's items
PATH_SECTIONS = ("genome", "calls", "sequences")  # top-level strings, taken as they are


def typed_section(name: str, completed: Any) -> Any:
    """The completed section `name` as its class (SECTION_TYPES); `experiments` as a list of
    ExperimentSection, the input paths as the strings they are."""
    if name in PATH_SECTIONS:
        return completed
    if name in LIST_SECTIONS:
        return [typed_section(LIST_SECTIONS[name], item) for item in completed]
    if name not in SECTION_TYPES:
        raise KeyError(f"no typed config section {name!r}")
    section_type: Any = SECTION_TYPES[name]
    return section_type.from_completed(completed)


def typed_sections(completed: Mapping[str, Any]) -> dict[str, Any]:
    """{section: completed section} → {section: typed section}."""
    return {name: typed_section(name, values) for name, values in completed.items()}


def untyped_sections(typed: Mapping[str, Any]) -> dict[str, Any]:
    """{section: typed section} → {section: its dict} (JSON), what `typed_sections` takes back."""

    def untyped(section: Any) -> Any:
        if isinstance(section, list):
            return [untyped(item) for item in section]
        return section.to_dict() if hasattr(section, "to_dict") else section

    return {name: untyped(section) for name, section in typed.items()}


def complete_typed_section(name: str, values: Any) -> Any:
    """Fill and check `values` against the schema (InputError names `<name>.<key>`), typed."""
    return typed_section(name, complete_section(name, values))


def complete_typed_sections(sections: Mapping[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """{section: values} → {section: typed section}: complete_sections' sections, typed."""
    return typed_sections(complete_sections(dict(sections), required))


def parse_typed_config(text: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """`--config` JSON → {section: typed section}: parse_rule_config's sections, typed."""
    return typed_sections(parse_rule_config(text, required))
