import sys
import time

from snakemake.utils import min_version

min_version("9.0")

RUN_STARTED = time.time()


# The defaults live next to the Snakefile, so --directory works; --configfile merges over them.
configfile: f"{workflow.basedir}/config/config.yaml"


# snakemake --report: the front page (the summary of every experiment) and the figure captions.
report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/demo.smk"
include: "rules/rescore.smk"
include: "rules/calling.smk"
include: "rules/sites.smk"
include: "rules/base.smk"
include: "rules/train_base.smk"
include: "rules/extract.smk"
include: "rules/tokenizer.smk"
include: "rules/bucket.smk"
include: "rules/train.smk"
include: "rules/pretrain.smk"
include: "rules/evaluate.smk"
include: "rules/plot.smk"
include: "rules/summary.smk"
include: "rules/explain.smk"
include: "rules/predict.smk"


rule all:
    default_target: True
    input:
        all_outputs(),


# The run's last lines: site_calls' tables and answer, when this run wrote site_metrics.json;
# with calling.start regions, the corrected calls' answer and folder.
onsuccess:
    if workflow.is_main_process and site_outputs():
        # imported here: sites.summary pulls in scikit-learn, 1.7 CPU-s on every parse
        from workflow_scripts.sites.summary import print_site_results

        print_site_results(layout.SITE_METRICS, since=RUN_STARTED)
    if workflow.is_main_process and files.calling_start() == "regions":
        # the corrected calls' answer and folder close a regions run (sites/rescore_report.py)
        from workflow_scripts.sites.rescore_report import closing_lines

        for line in closing_lines(layout.RESCORED_DIR):
            print(line, file=sys.stderr)
