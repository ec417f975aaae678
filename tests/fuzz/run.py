"""atheris driver: ``python tests/fuzz/run.py TARGET [libFuzzer flags]``.

TARGET is ``decode_envelope``, ``replay`` or ``log_import`` (see
``tests/fuzz/targets.py``). The seed corpus (the reference logs, cut short)
is written to a fresh corpus directory unless one is given as the first
non-flag argument after TARGET. Examples::

    python tests/fuzz/run.py decode_envelope -max_total_time=60
    python tests/fuzz/run.py replay -runs=2000

Needs the ``fuzz`` extra (``pip install -e '.[fuzz]'``). A crash (an
exception that is not a memex error, or a CLI exit that is not 0/1/2 or
reports an unexpected error) stops the run with the input saved as
``crash-*`` in the working directory.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import memex  # noqa: E402,F401
from tests.fuzz.targets import TARGETS, seed_inputs  # noqa: E402

atheris.instrument_all()  # coverage feedback from every loaded function (memex's included)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: run.py {{{','.join(TARGETS)}}} [CORPUS_DIR] [libFuzzer flags]")
    target = TARGETS[sys.argv[1]]
    rest = sys.argv[2:]
    if not rest or rest[0].startswith("-"):
        corpus = tempfile.mkdtemp(prefix=f"memex-corpus-{sys.argv[1]}-")
        for i, seed in enumerate(seed_inputs()):
            with open(os.path.join(corpus, f"seed-{i:03d}"), "wb") as f:
                f.write(seed)
        rest = [corpus, *rest]
    atheris.Setup([sys.argv[0], *rest], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
