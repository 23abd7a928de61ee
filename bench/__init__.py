"""Benchmarks: each ``bench/<name>.py`` is a script that prints its figures.

Run them all with ``bash .ci/dev bench``. (This file only exists so that the
directory is a package and ``mypy`` has something to check; the runner skips it.)
"""
