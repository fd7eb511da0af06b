"""What the workflow itself calls while Snakemake parses it (rules/*.smk), above every other folder
of the package: checks of the user's input files before any job runs (preflight.py), each rule's
`--config` of only the keys it reads (rule_configs.py), and the files the rules read and the
workflow's targets as the config says (rule_files.py)."""
