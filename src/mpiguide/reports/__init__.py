"""What people read beside the verdicts: plots, the library table, variability, latency-model
fits and Gropp's partner table.
"""
