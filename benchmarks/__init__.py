"""The benchmarks, a package of the repository root so they import each other by name.

Run one from the root as `python -m benchmarks.NAME`. Tests import the pieces they check
(`benchmarks.real_model_scoring`, `benchmarks.render_floor`, ...) the same way, and a benchmark
takes a test's fixtures from the `tests` package.
"""
