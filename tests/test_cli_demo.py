"""memlab.cli.demo: ``memlab demo`` prints the walk-through, or the audit as JSON, and refuses a path in use.

What the walk-through shows is tests/test_demo.py's.
"""

from __future__ import annotations

import json

from memlab.cli import main


def test_the_demo_prints_its_nine_sections(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert [line.split(".")[0] for line in out.splitlines() if line.startswith("== ")] == [
        f"== {n}" for n in range(1, 10)
    ]
    assert "== 9. Memory poisoning" in out and "verify: ok" in out


def test_with_json_only_the_audit_and_taint_events_are_printed(capsys):
    # Guards: cli.demo printing the walk-through to standard output under --json (the document then unreadable).
    assert main(["demo", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert set(document) == {"audit", "taint_events"}
    assert {row["tool"] for row in document["audit"]} >= {"memory_save", "memory_list", "memory_search"}
    assert [event["to_level"] for event in document["taint_events"]] == [
        "INTERNAL",  # public-chat escalated
        "INTERNAL@untrusted",  # browser fed a web page
        "INTERNAL@untrusted",  # assistant read the poison
    ]


def test_a_db_in_use_is_refused_with_status_2_and_left_alone(tmp_path, capsys):
    used = tmp_path / "notes.txt"
    used.write_text("someone's notes")
    assert main(["demo", "--db", str(used)]) == 2
    assert capsys.readouterr().err.startswith("memlab demo: ")
    assert used.read_text() == "someone's notes"
    assert main(["demo", "--db", str(tmp_path / "new.db"), "--json"]) == 0
    assert (tmp_path / "new.db").stat().st_size > 0
