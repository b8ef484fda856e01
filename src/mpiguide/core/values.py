"""The one text form of a parameter value that selectors, pairing, the config checks and the
tables compare and print: integral numbers without decimals (`8`, also for 8.0 from a float
column), anything else as `str` gives it; and the name of the library's own choice of algorithm,
which grid.csv and the kernel's input leave empty."""

from __future__ import annotations

import numpy as np
import pandas as pd

# The experiment parameter `algorithm` where the library chooses (empty in grid.csv, the kernel's
# input and medians.parquet) as selectors, pairing and tests.csv name it: a value of its own, so
# that it pairs only with itself, never as the wildcard of a parameter that does not apply. Not
# "default": Open MPI's allgatherv has an algorithm of that name.
LIBRARY_CHOICE = "library-default"
# The experiment parameter `algorithm` reserved for every library: the library's own call on a
# communicator libmpiguide-tune leaves alone, beside the replaced call in the same launch (the
# kernel's ALGORITHM_UNTUNED, src/kernel/algorithm/algorithm.h; docs/kernel.md).
UNTUNED = "untuned"
# The first word of the ids of the guidelines mpiguide adds to tune and verify:
# `ALGO.<entry>.<op>.<algorithm>` (an algorithm against the library's choice),
# `TUNE.<entry>.<collective>` (libmpiguide-tune's replacement against the library's own call) and
# `APPLIED.<entry>.<collective>[.<algorithm>]` (the library's own call under the settings file
# `tune` wrote against its old default, or against the chosen algorithm forced).
# A campaign may not name a guideline of its own so. How they are decided is their
# `decided_by` (mpiguide.analysis.analysis_types), never read from the id.
ALGORITHM_GUIDELINE_PREFIX = "ALGO"
TUNE_GUIDELINE_PREFIX = "TUNE"
APPLIED_GUIDELINE_PREFIX = "APPLIED"
TUNING_GUIDELINE_PREFIXES = (
    ALGORITHM_GUIDELINE_PREFIX,
    TUNE_GUIDELINE_PREFIX,
    APPLIED_GUIDELINE_PREFIX,
)
# Their name where a text speaks of them all.
TUNING_GUIDELINES = ", ".join(f"{prefix}.…" for prefix in TUNING_GUIDELINE_PREFIXES)


def canonical_value(value: object) -> str:
    """One value's canonical text."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def canonical_values(values: pd.Series) -> np.ndarray:
    """A column's canonical texts (the rule of `canonical_value`), missing values as ""."""
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_bool_dtype(values):
        numbers = values.astype("float64")
        integral = numbers.notna() & (numbers == np.round(numbers))
        text = numbers.astype(str)
        text[integral] = numbers[integral].astype("int64").astype(str)
        text[numbers.isna()] = ""
        return text.to_numpy(dtype=object)
    return values.astype(object).where(values.notna(), "").astype(str).to_numpy(dtype=object)
