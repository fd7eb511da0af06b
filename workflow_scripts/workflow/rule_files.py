"""Which files the rules read and the workflow makes, as the config says: the input functions and
targets rules/*.smk call (`files.<name>`), functions of the validated config and the run names
(config/runs.py), with paths from layout.py. Input functions take Snakemake's wildcards (any
object with an `experiment` attribute).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

from workflow_scripts import layout
from workflow_scripts.artifacts import EXPLAIN_PLOTS, PLOTS, plot_file_name
from workflow_scripts.calling.model_files import weight_files
from workflow_scripts.errors import InputError
from workflow_scripts.tokenization.tokenizers import resolve_tokenizer_kind
from workflow_scripts.workflow.resources import rescore_mem_mb, scored_nt

PREDICTIONS = "predictions/{name}.parquet"  # predict_calls' output in a run's folder


def plot_paths(experiment: str = layout.RUN_WILDCARD) -> list[str]:
    """The plot rule's PNGs (artifacts.PLOTS) for one experiment."""
    return [layout.run_file(f"plots/{plot_file_name(name)}", experiment) for name in PLOTS]


def explain_plot_paths(experiment: str = layout.RUN_WILDCARD) -> list[str]:
    """The explain rule's PNGs (artifacts.EXPLAIN_PLOTS) for one experiment."""
    return [layout.run_file(f"explain/{plot_file_name(name)}", experiment) for name in EXPLAIN_PLOTS]


@dataclass(frozen=True)
class RuleFiles:
    config: dict  # the workflow's validated config
    experiments: tuple[str, ...]  # the experiments' runs
    site_runs: tuple[str, ...]  # sites.model's fold runs ((): off)

    # ---- where the calls come from (docs/calling.md) ----
    def calling_start(self) -> str:
        return self.config["calling"]["start"]

    def uses_sequences_table(self) -> bool:
        return "sequences" in self.config

    def calls_table(self) -> str:
        """The user's calls table (calling.start calls), else the make_calls rule's output."""
        if self.calling_start() == "calls":
            return self.config["calls"]
        return layout.CALLS_TABLE

    def calls_summary_input(self) -> str | list:
        """make_calls' summary.json (the calls' counts) if the pipeline made the calls."""
        if self.uses_sequences_table() or self.calling_start() == "calls":
            return []
        return layout.CALLS_SUMMARY

    def shard_files(self, *patterns: str) -> list[str]:
        """`patterns` (layout.SCORE_SHARD ...) for shards 1..calling.base_model.shards."""
        shards = self.config["calling"]["base_model"]["shards"]
        return [
            pattern.format(shard=shard, shards=shards)
            for pattern in patterns
            for shard in range(1, shards + 1)
        ]

    def scores_tables(self) -> list[str]:
        """The user's scores table (calling.start scores), else every score_base_model shard's
        output (calling.base_model.shards of them, gathered by make_calls)."""
        if self.calling_start() == "scores":
            return [self.config["calling"]["scores"]]
        return self.shard_files(layout.SCORE_SHARD)

    def score_shard_outputs(self) -> list[str]:
        """calling.start annotation or regions: every score_base_model shard and its record,
        targets of their own: Snakemake does not redo a deleted file that only feeds jobs whose
        outputs are there, so a shard deleted after a run would stay missing (make_calls,
        site_calls, extract and rescore_sites read them)."""
        if self.uses_sequences_table() or self.calling_start() not in ("annotation", "regions"):
            return []
        return self.shard_files(layout.SCORE_SHARD, layout.SCORE_SHARD_RECORD)

    def score_records(self) -> list[str]:
        """Every score shard's regions.json (the weights' facts: provenance), where the pipeline scores."""
        return self.shard_files(layout.SCORE_SHARD_RECORD) if self.score_shard_outputs() else []

    def scores_made_by(self) -> list[str]:
        """calling.start scores with calling.base_model.weights: the files of the model that made
        the scores table (not run; site_calls and summarize record them as made_by); else []."""
        weights = self.config["calling"]["base_model"].get("weights")
        if self.uses_sequences_table() or self.calling_start() != "scores" or not weights:
            return []
        return [str(path) for path in weight_files(weights)]

    def given_tables(self) -> list[str]:
        """The tables a user gives in place of a stage's outputs: calls, scores or sequences."""
        if self.uses_sequences_table():
            return [self.config["sequences"]]
        if self.calling_start() in ("calls", "scores"):
            return self.scores_tables() if self.calling_start() == "scores" else [self.config["calls"]]
        return []

    def provenance_inputs(self) -> dict[str, Any]:
        """summarize's declared inputs its provenance.json is made of (evaluation/provenance.py):
        the records of index_genome, annotate_sites and the score shards, or the tables given (and
        the weights that made a scores table); every name, [] where unused."""
        records = ("genome_record", "annotation_summary", "score_records")
        inputs: dict[str, Any] = dict.fromkeys((*records, "calls", "scores", "sequences", "made_by"), [])
        if self.uses_sequences_table():
            return {**inputs, "sequences": self.config["sequences"]}
        start = self.calling_start()
        inputs["genome_record"] = layout.GENOME_RECORD
        if start == "calls":
            return {**inputs, "calls": self.config["calls"]}
        inputs["annotation_summary"] = layout.ANNOTATION_SUMMARY
        if start == "scores":
            return {**inputs, "scores": self.scores_tables(), "made_by": self.scores_made_by()}
        return {**inputs, "score_records": self.score_records()}

    def calling_annotation(self) -> list[str]:
        return self.config["calling"].get("annotation", [])

    def base_model_weights(self) -> list[str]:
        """The base model's files (calling.start annotation or regions): score_base_model's inputs."""
        if self.calling_start() not in ("annotation", "regions"):
            return []
        weights = self.config["calling"]["base_model"]["weights"]
        if layout.names_train_base_models(weights):  # train_base's folder: the run trains them
            return self.train_base_models()
        return [str(path) for path in weight_files(weights)]

    def scored_spans(self) -> str:
        """What score_base_model scores: the target regions (calling.start regions, or annotation
        with calling.regions: a whole-region scan the annotation only labels), else the
        annotation's genes."""
        return layout.REGIONS_TABLE if self.scores_regions() else layout.ANNOTATION_GENES

    def scores_regions(self) -> bool:
        start = self.calling_start()
        return start == "regions" or (start == "annotation" and bool(self.config["calling"].get("regions")))

    def scored_regions(self) -> list[str]:
        """site_calls' and site_windows' `regions` input: the scored regions of a whole-region scan
        with an annotation (calling.start annotation with calling.regions); [] otherwise."""
        return (
            [layout.REGIONS_TABLE] if self.calling_start() == "annotation" and self.scores_regions() else []
        )

    def calling_regions(self) -> list[str]:
        """calling.regions: the BED of the regions to score; [] = every chromosome."""
        path = self.config["calling"].get("regions")
        return [path] if path else []

    def rescore_mem_mb(self, wildcards: Any, attempt: int = 1) -> int:
        """rescore_sites' memory: it grows with the nt the regions hold (workflow/resources.py)."""
        regions = self.calling_regions()
        nt = scored_nt(
            regions[0] if regions else None, layout.GENOME_INDEX, str(self.config.get("genome", ""))
        )
        return rescore_mem_mb(nt, attempt)

    def extract_inputs(self, wildcards: Any) -> dict[str, Any]:
        if self.uses_sequences_table():
            return {"sequences": self.config["sequences"]}
        inputs: dict[str, Any] = {
            "index": layout.GENOME_INDEX,
            "sequence": layout.GENOME_SEQUENCE,
            "calls": self.calls_table(),
        }
        # the scores behind the calls: the windows' score profiles (calling/score_profiles.py)
        if self.calling_start() != "calls":
            inputs |= {"scores": self.scores_tables(), "genes": layout.ANNOTATION_GENES}
        return inputs

    # ---- the base model's own training data (docs/base_training.md) ----
    def genome_fasta(self) -> list[str]:
        """The genome FASTA (`genome:`), [] without one."""
        return [self.config["genome"]] if "genome" in self.config else []

    def base_data_outputs(self) -> list[str]:
        """base_data.enabled: its folder's files, targets of `all`."""
        if not self.config["base_data"]["enabled"]:
            return []
        return [
            layout.BASE_DATA_BLOCKS,
            layout.BASE_DATA_SEQUENCE,
            layout.BASE_DATA_LABELS,
            layout.BASE_DATA_MANIFEST,
        ]

    def base_model_folders(self) -> list[str]:
        """evaluate_base.models: the folders of the base models to compare ([] = off)."""
        return list(self.config["evaluate_base"]["models"])

    def evaluate_base_weights(self) -> list[str]:
        """Every .pt file of evaluate_base.models' folders, folder by folder: the rule's inputs.
        train_base's folder (results/train_base/models) is its seeds' models, made in this run."""
        files = []
        for folder in self.base_model_folders():
            if layout.names_train_base_models(folder):
                files += self.train_base_models()
            else:
                files += [str(path) for path in weight_files(folder)]
        return files

    def evaluate_base_outputs(self) -> list[str]:
        """evaluate_base.models not empty: its metrics and figure, targets of `all`."""
        return [layout.BASE_EVAL_METRICS, layout.BASE_EVAL_PLOT] if self.base_model_folders() else []

    def train_base_models(self) -> list[str]:
        """train_base's model files, one per seed (train_base.seeds)."""
        section = self.config["train_base"]
        return [
            layout.TRAIN_BASE_MODEL.format(context=section["context"], seed=seed) for seed in section["seeds"]
        ]

    def train_base_outputs(self) -> list[str]:
        """train_base.enabled: every seed's model, provenance and card, targets of `all`."""
        section = self.config["train_base"]
        if not section["enabled"]:
            return []
        patterns = (layout.TRAIN_BASE_MODEL, layout.TRAIN_BASE_PROVENANCE, layout.TRAIN_BASE_CARD)
        return [
            p.format(context=section["context"], seed=seed) for seed in section["seeds"] for p in patterns
        ]

    def train_base_init(self) -> list[str]:
        """train_base.init_weights (the job's --init-weights input), [] from scratch."""
        path = self.config["train_base"].get("init_weights")
        return [path] if path else []

    # ---- site-level calls (docs/sites.md) ----
    def site_windows_outputs(self) -> list[str]:
        return [layout.run_file(layout.WINDOWS, run) for run in self.site_runs]

    def site_model_inputs(self, field: str) -> list[str]:
        """sites.model: the file `field` of layout.FoldRunFiles (windows, manifest, weights,
        model_config, predictions) of each of its runs, in fold order: site_calls' input
        `fold_<field>`; [] when off."""
        fields = [item.name for item in dataclasses.fields(layout.FoldRunFiles)][1:]
        name = dict(zip(fields, layout.FOLD_RUN_FILES, strict=True))[field]
        return [layout.run_file(name, run) for run in self.site_runs]

    def site_transfer_inputs(self) -> list[str]:
        """sites.transfer: another genome's re-scorer folder, applied unchanged; [] when unset."""
        path = self.config["sites"].get("transfer")
        return [path] if path else []

    def site_transfer_manifest(self) -> list[str]:
        """The re-scorer's rescorer.json, for the content digest (a folder has none): it holds
        every other file's sha256, and site_calls refuses a file that differs from it."""
        return [os.path.join(path, "rescorer.json") for path in self.site_transfer_inputs()]

    # ---- models, tokenizers and pretraining (docs/models.md) ----
    def tokenizer_kind(self) -> str:
        return resolve_tokenizer_kind(self.config["tokenizer"], self.config["model"])

    def bucket_tokenizer_input(self, wildcards: Any) -> str | list:
        if self.tokenizer_kind() == "bpe":
            return layout.run_file(layout.TOKENIZER_DIR, wildcards.experiment)
        return []

    def pretrained_encoder_input(self, wildcards: Any) -> str | list:
        if self.config["pretrain"]["enabled"]:
            return layout.run_file(layout.PRETRAINED_ENCODER, wildcards.experiment)
        return []

    def pretrain_genome_input(self, wildcards: Any) -> str | list:
        return layout.GENOME_INDEX if self.config["pretrain"]["source"] == "genome" else []

    # ---- a trained model on new calls (README: Use a trained model) ----
    def predict_calls(self) -> str:
        if "calls" not in self.config["predict"]:
            raise InputError("config", "predict.calls", "set the calls table to score")
        return self.config["predict"]["calls"]

    def prediction_outputs(self, wildcards: Any) -> list[str]:
        """What `snakemake predict` makes: predict.calls scored by every experiment's model."""
        self.predict_calls()
        name = PREDICTIONS.format(name=self.config["predict"]["name"])
        return [layout.run_file(name, experiment) for experiment in self.experiments]

    def predict_genome(self) -> dict[str, str]:
        """{"genome": predict.genome (a FASTA)}, else {"index": the pipeline's genome index}."""
        if "genome" in self.config["predict"]:
            return {"genome": self.config["predict"]["genome"]}
        if "genome" not in self.config:
            raise InputError("config", "predict.genome", "needed: the workflow has no genome: input")
        return {"index": layout.GENOME_INDEX}

    def predict_inputs(self, wildcards: Any) -> dict[str, str]:
        calls = self.predict_calls()

        def run_file(name: str) -> str:
            return layout.run_file(name, wildcards.experiment)

        return {
            "calls": calls,
            **self.predict_genome(),
            "model": run_file(layout.MODEL_WEIGHTS),
            "model_config": run_file(layout.MODEL_CONFIG),
            "metrics": run_file(layout.METRICS),
        }

    # ---- the targets of `all` ----
    def experiment_outputs(self) -> list[str]:
        """Every experiment's plots, explain plots and metrics, and the summary."""
        plots = [path for experiment in self.experiments for path in plot_paths(experiment)]
        plots += [path for experiment in self.experiments for path in explain_plot_paths(experiment)]
        metrics = [layout.run_file(layout.METRICS, experiment) for experiment in self.experiments]
        summary = [f"{layout.SUMMARY_DIR}/summary.tsv", f"{layout.SUMMARY_DIR}/provenance.json"]
        return plots + metrics + summary

    def makes_site_calls(self) -> bool:
        """site_calls runs where the pipeline makes the calls (calling.start scores or annotation)."""
        return not self.uses_sequences_table() and self.calling_start() not in ("calls", "regions")
