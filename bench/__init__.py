"""nav's benchmarks: the harness every benchmark shares (``bench.harness``), the benchmarks the
README tells people to re-run (``bench/*.py``), the fault scenarios (``bench.fault_scenarios``, run
by ``python -m bench.faults``), and one-off experiments kept for the record (``bench/archive/``)."""
