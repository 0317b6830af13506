"""``python -m ragsonde`` is the ``ragsonde`` command."""

from ragsonde.cli import main

main()
