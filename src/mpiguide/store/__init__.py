"""The kernel's raw output made into timings.parquet and medians.parquet, with their integrity
checks and the Tukey-filtered run medians.
"""
