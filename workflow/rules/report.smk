# `snakemake --report results/<campaign>/report.html`: this description on the front page; the
# tables and plots are registered with report() where they are produced.


report: "../report/workflow.rst"
