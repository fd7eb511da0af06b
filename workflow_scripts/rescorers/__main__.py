"""python -m workflow_scripts.rescorers: one line per shipped re-scorer (sites.transfer: builtin:<name>)."""

from workflow_scripts.rescorers import available, summary

for shipped in available():
    print(summary(shipped))
if not available():
    print("no re-scorer is shipped with this errorseq")
