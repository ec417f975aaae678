"""Side-by-side benchmark of memex against memex-python 0.14.0: ``python -m benchmarks.compare``."""
