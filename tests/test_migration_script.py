"""A program written against memex-python 0.14's README runs against memex.

tests/migration/memex_python_014_script.py is run in a subprocess with this
repository's memex (``PYTHONPATH`` set to the repository root, and the
imported file checked). Its output must be :data:`EXPECTED`. The lines where
memex-python 0.14.0 printed something else (captured by running the same
file in a separate virtual environment with ``memex-python==0.14.0``) are in
:data:`MEMEX_PYTHON_014`: each is a behaviour difference listed in
docs/migration.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "migration" / "memex_python_014_script.py"

#: What the script prints with memex.
EXPECTED = """\
tour.events: ['memory.created']
tour.ranked: [('observation', 0.865), ('hypothesis', 0.68)]
tour.tree: (True, True, 0)
tour.result: (1, ['memory.retracted'], 2)
tour.frozen: FrozenInstanceError
tour.model_copy: (0.5, 0.95, True)
tour.content_reused: coffee
tour.out_of_range: ('ValidationError', True)
trust.attention_queue: ['revenue will be restated downward']
disagree.surface: [('PRC surveillance platform', 0.91, ['civilian weather balloon, off-course']), ('civilian weather balloon, off-course', 0.45, ['PRC surveillance platform'])]
disagree.filter: ['PRC surveillance platform']
disagree.contradictions: 1
disagree.scored_keys: ['item', 'score', 'contradicted_by', 'relevance']
disagree.model_dump: (['contradicted_by', 'item', 'score'], ['author', 'authority', 'content', 'conviction'], 1)
prov.support_set: ['BBB', 'leverage', 'debt', 'footnote 12', 'ebitda']
time.decayed: [0.7, 0.475, 0.475, 0.475, 0.45]
stale.items: [('leverage', 1)]
stale.cascade: (3, 2, ['memory.retracted'])
alias.group: ['ACME Corp', 'ACME Industries', 'the company']
supersede.plessy_authority: 0.09
supersede.edges: [('SUPERSEDES', True)]
smart.context: ['Brown v. Board of Education']
filter.low_res: ['Brown v. Board of Education']
filter.meta: 0
bulk.adjusted: [0.9, 0.99, 1]
bulk.decayed: [0.9, 0.99, 1]
bulk.apply_many: 2
graphs.task: ('completed', 1, [])
graphs.intent: ('active', 'pending', 0)
graphs.event.model_dump: {'namespace': 'task', 'type': 'task.completed', 'cause_type': 'task.complete'}
graphs.task.model_dump: ['action', 'attempt', 'id', 'input_memory_ids', 'intent_id', 'output_memory_ids', 'priority', 'status']
graphs.intent.model_dump: active
graphs.synthesis: (True, True)
store.b_authority: 0.04
store.graphs: (1, 1, 'pending')
store.scored: [(1, 0.9), (2, 0.04)]
store.loads: (2, 1, True)
transplant.export: (2, 0)
transplant.report: (2, 0, 1, 0)
transplant.merged: 4
persist.envelope_keys: ['id', 'namespace', 'type', 'ts', 'payload']
persist.parse: (2, True)
persist.json: 2
persist.stats: (2, {'observation': 2}, 0)
persist.replay: (2, 2, [(2, 'InvalidTimestampError')])
validate.ok: ('memory.create', True)
validate.bad: ('ValidationError', True)
pyd.item.keys: ['id', 'scope', 'kind', 'content', 'author', 'source_kind', 'parents', 'authority', 'conviction', 'importance', 'created_at', 'intent_id', 'task_id', 'meta']
pyd.item.copy_is_independent: ['a']
pyd.item.roundtrip: True
pyd.edge.names: ['from_']
pyd.edge.alias: ['from']
pyd.edge.exclude_none: ['edge_id', 'from', 'to', 'kind', 'author', 'source_kind', 'authority', 'active']
pyd.edge.validate_alias: True
pyd.edge.validate_names: True
pyd.edge.json: (True, True, True)
pyd.edge.json_indent: ['{', '  "edge_id"', '  "from_"']
pyd.model_copy: (0.7, None, True)
pyd.validate_error: ('ValidationError', True)
pyd.validate_str_number: ValidationError
pyd.model_copy_bad: ValidationError
pyd.envelope.payload: ('dict', 0.9)
pyd.int_score: 1
"""

#: The lines memex-python 0.14.0 prints differently (label -> its value),
#: each explained in docs/migration.md, "Behaviour differences".
MEMEX_PYTHON_014 = {
    # assigning to a frozen record: pydantic.ValidationError there, attrs' FrozenInstanceError
    # (an AttributeError) here
    "tour.frozen": "ValidationError",
    # memex keeps the dict given as content; Pydantic copied it
    "tour.content_reused": "tea",
    # ScoredItem has a relevance field (None without a query)
    "disagree.scored_keys": "['item', 'score', 'contradicted_by']",
    # bulk_adjust_scores clamps to the int 1 (equal to 1.0)
    "bulk.adjusted": "[0.9, 0.99, 1.0]",
    "bulk.decayed": "[0.9, 0.99, 1.0]",
    # no lax coercion: the string "0.5" is not a number
    "pyd.validate_str_number": "accepted",
    # model_copy validates its result
    "pyd.model_copy_bad": "7",
    # an int score stays an int (Pydantic made it 1.0)
    "pyd.int_score": "1.0",
}


def _run() -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONHASHSEED="0")
    runner = (
        "import runpy, sys, memex; sys.stderr.write('memex: ' + memex.__file__ + '\\n'); "
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')"
    )
    return subprocess.run(
        [sys.executable, "-c", runner],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_memex_python_script_runs_against_this_memex() -> None:
    proc = _run()
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines()[0] == f"memex: {ROOT / 'memex' / '__init__.py'}"
    assert proc.stdout == EXPECTED


def test_the_listed_differences_are_lines_of_the_output() -> None:
    labels = [line.split(": ", 1)[0] for line in EXPECTED.splitlines()]
    assert len(labels) == len(set(labels))
    assert set(MEMEX_PYTHON_014) <= set(labels)
    # every difference is in the migration page
    page = (ROOT / "docs" / "migration.md").read_text("utf-8")
    for label in MEMEX_PYTHON_014:
        assert f"`{label}`" in page, label
