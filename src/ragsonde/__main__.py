"""``python -m ragsonde`` is the ``ragsonde`` command."""

from ragsonde._entry import main

main()
