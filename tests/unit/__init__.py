"""Unit tests, one folder per folder of src/mpiguide (and repo/ for what spans the repository:
import layers, C sources, documented commands, workflow glue, campaign files).

Each folder is a package so that two folders may hold test files of the same name: pytest's
default import mode imports a test file outside a package by its bare file name.
"""
