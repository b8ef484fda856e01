"""From verdict to fix: a library's own algorithms swept as experiments of an entry, compared
with its own choice within the same launches, the fastest one chosen where it beats the default
significantly and written as the settings the library reads (Open MPI rules file, MPICH cvars
and JSON selection), and the tuning file of libmpiguide-tune (src/tune) where a collective loses
to its own mock-up.
"""
