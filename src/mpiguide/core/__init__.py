"""The shared ground every stage stands on: user errors, atomic writes, the strict YAML loader
and schema messages, the names of results paths and of data columns, the CSV table writer.
"""
