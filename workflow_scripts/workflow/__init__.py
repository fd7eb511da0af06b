"""What the workflow itself calls while Snakemake parses it (rules/common.smk), above every other
folder of the package: checks of the user's input files before any job runs (preflight.py)."""
