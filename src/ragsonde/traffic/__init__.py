"""Production traffic: query logs and traces read as unlabelled benchmarks, and label-free
signals of how well each query is served (``ragsonde traffic``)."""

__all__: list[str] = []
