"""Run the memex command line as ``python -m memex`` (same as the ``memex`` script)."""

from memex.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
