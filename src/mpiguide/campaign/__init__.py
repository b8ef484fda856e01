"""A campaign checked as a whole before any job starts, against every stage it names (grid,
guidelines, analysis options, models, injector asks), its `local:` scale, launch words and
the record of its options.
"""
