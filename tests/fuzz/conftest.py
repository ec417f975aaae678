"""Collection rules: the atheris driver is a script, not a test module (it needs the fuzz extra)."""

collect_ignore = ["run.py"]
