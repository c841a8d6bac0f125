"""What the benchmarks share: ranking metrics (:mod:`.metrics`), resampling statistics (:mod:`.stats`),
the benchmark data of ``../shared/bench/`` (:mod:`.data`), timing a command and writing a result file
(:mod:`.run`), and LSP's Content-Length framing (:mod:`.jsonrpc`). Pure Python; tested in
``tests/test_bench_metrics.py`` and ``tests/test_bench_harness.py``."""
