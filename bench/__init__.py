"""ragsonde's benchmarks: each ``bench_<name>`` module measures one claim against a baseline in
the same run and writes ``bench/results/<name>.json``; :mod:`bench.report` turns those into
``bench/RESULTS.md``. Run them from the repository's root, as modules::

    .venv/bin/python -m bench.run_all [--quick]
    .venv/bin/python -m bench.bench_store --help
"""
