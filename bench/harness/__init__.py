"""What the benchmarks share: ranking metrics (:mod:`.metrics`), resampling statistics
(:mod:`.stats`), the benchmark data of ``../shared/bench/`` (:mod:`.data`), and timing a command and
writing a result file (:mod:`.run`). Pure Python; the metrics and statistics are unit-tested in
``tests/test_bench_metrics.py``."""
