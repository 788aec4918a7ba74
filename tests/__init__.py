"""The tests, a package of the repository root: shared helpers are imported as `tests.NAME`, and
benchmarks take their fixtures from here by the same name."""
