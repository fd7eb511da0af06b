"""What the workflow itself calls while Snakemake parses it (rules/*.smk), above every other folder
of the package: checks of the user's input files before any job runs (preflight.py), each rule's
flags and `--config` from its declaration (rule_params.py, config/stages/), and the files the rules read and the
workflow's targets as the config says (rule_files.py)."""
