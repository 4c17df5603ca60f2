"""``prw eval``: measuring the platform against annotated data (the benchmark metric, the datasets)."""
