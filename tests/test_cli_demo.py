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


def _demo_at(columns: int) -> str:
    import io

    from memlab.demo import run

    out = io.StringIO()
    run(out=out, width=columns)
    return out.getvalue()


def test_the_section_about_user_name_shows_user_name_first():
    # Guards: section 1 titled after user-name listing four other keys before it (issue 37).
    section = _demo_at(80).split("== 2.")[0]
    keys = [line.split()[1] for line in section.splitlines() if line.startswith("key ")]
    assert keys[0] == "user-name" and sorted(keys[1:]) == ["favourite-language", "project-deadline", "salary-review"]


def test_the_demo_prints_sentences_not_python_values():
    # Guards: section 2 printing the tool's result as a Python dict ({'saved': True, ...}).
    text = _demo_at(80)
    assert "{'" not in text and "'saved'" not in text
    assert "review-note was saved as CONFIDENTIAL" in " ".join(text.split())


def test_at_80_columns_no_line_is_longer_and_no_word_is_cut():
    # Guards: cells cut in their middle ("favourit…language") to fit 80 columns.
    text = _demo_at(80)
    assert max(map(len, text.splitlines())) <= 80
    assert "…" not in text
    words = set(text.split())
    for whole in ["favourite-language", "project-deadline", "scripting", "onboarding", "(CONFIDENTIAL)"]:
        assert whole in words, whole
