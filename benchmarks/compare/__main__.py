"""``python -m benchmarks.compare``: see :mod:`benchmarks.compare.harness`."""

from benchmarks.compare.harness import main

raise SystemExit(main())
