"""Does the pipeline from annotation to windows scale to a whole genome without a GPU?

- synthetic_genome: a seeded genome and GTF at GENCODE's density, any size.
- genome_scale: index_genome → annotate_sites → score_base_model (sharded) → make_calls →
  extract through Snakemake at growing sizes, seconds and peak RSS per job from Snakemake's own
  benchmark files.
"""
