"""Guideline verdicts from medians.parquet: the catalogue and its types, pairing, the statistics,
tests.csv and the summary, paper and slowdown tables.
"""
