"""The widgets: their plain functions, and one headless test per widget (set values, click, read the HTML)."""

import itertools
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import ipywidgets
import pandas as pd
import pytest

from memlab import InvalidArgument, Level, MemoryStore, Session, check, policies
from memlab import widgets as mw
from memlab.eval import load_locomo, load_trec
from memlab.widgets import render
from memlab.widgets.audit import timeline_html, verification_html
from memlab.widgets.render import badge, highlight, html_table
from memlab.widgets.simulator import open_session
from memlab.widgets.views import seen_column

ROOT = Path(__file__).resolve().parents[1]
TREC = ROOT / "tests" / "fixtures" / "trec-tiny"
START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def ticking_clock():
    """A clock that moves one second per reading, so every row has its own time."""
    seconds = itertools.count()
    return lambda: START + timedelta(seconds=next(seconds))


def at(second: int) -> str:
    return (START + timedelta(seconds=second)).isoformat(timespec="microseconds")


@pytest.fixture(scope="module")
def trec():
    return load_trec(TREC)


def user_name_store() -> MemoryStore:
    """user-name at three levels; the INTERNAL one saved twice, its newest version deleted."""
    store = MemoryStore(clock=ticking_clock())
    public, internal, secret = (store.session(level, session_id=level.name.lower()) for level in list(Level)[:3])
    public.memory_save("user-name", "Sam")
    internal.memory_save("user-name", "Samantha")
    internal.memory_save("user-name", "Samantha Rivera")
    internal.memory_delete("user-name")
    secret.memory_save("user-name", "Samantha Rivera, badge 0042")
    return store


# -- plain functions ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tool, form, expected",
    [
        (
            "memory_save",
            {"key": "k", "content": "c", "tags": " a, ,b "},
            {"key": "k", "content": "c", "tags": ["a", "b"]},
        ),
        ("memory_save", {"key": "k", "content": "c", "tags": ""}, {"key": "k", "content": "c"}),
        ("memory_get", {"key": "k", "content": "ignored"}, {"key": "k"}),
        ("memory_delete", {"key": ""}, {"key": ""}),
        ("memory_search", {"query": "what is my name?"}, {"query": "what is my name?"}),
        ("memory_list", {"tag": ""}, {}),
        ("memory_list", {"tag": "hr"}, {"tag": "hr"}),
    ],
)
def test_tool_arguments_from_form_fields(tool, form, expected):
    assert mw.tool_arguments(tool, **form) == expected


def test_run_tool_goes_through_tools_call_so_hooks_and_audit_apply(store):
    seen = []
    store.hooks.append(lambda call: seen.append(call.tool) or call)
    session = store.session(Level.INTERNAL)
    assert mw.run_tool(session, "memory_save", key="k", content="c") == {
        "saved": True,
        "key": "k",
        "classification": "INTERNAL",
        "integrity": "trusted",
        "version": 1,
    }
    assert mw.run_tool(session, "memory_delete", key="")["error"]["code"] == "invalid_argument"
    assert seen == ["memory_save", "memory_delete"]
    assert store.audit()["outcome"].tolist() == ["ok", "invalid_argument"]


def test_open_session_from_specs(store):
    assert open_session(store, ("a",)).taint == Level.PUBLIC
    assert (open_session(store, "plain").id, open_session(store, ("c", "internal")).agent) == ("plain", "main")
    made = open_session(store, ("b", "confidential", "bob"))
    assert (made.id, made.taint, made.agent) == ("b", Level.CONFIDENTIAL, "bob")
    assert open_session(store, made) is made
    with pytest.raises(InvalidArgument, match="another store"):
        open_session(MemoryStore(), made)
    with pytest.raises(InvalidArgument, match="already"):
        open_session(store, ("b",))


def test_shadow_table_marks_the_version_each_level_sees_and_strikes_deletes():
    store = user_name_store()
    before = len(store.audit())
    table = mw.shadow_table(store, "user-name")
    assert len(store.audit()) == before  # the auditor's view reads no session
    assert table[["classification", "version", "status"]].values.tolist() == [
        ["PUBLIC", 1, "current"],
        ["INTERNAL", 1, "superseded"],
        ["INTERNAL", 2, "deleted"],
        ["CONFIDENTIAL", 1, "current"],
    ]
    seen = {level.name: table.loc[table[seen_column(level)], "content"].tolist() for level in Level}
    assert seen == {
        "PUBLIC": ["Sam"],
        "INTERNAL": ["Sam"],  # the delete uncovered the PUBLIC version, not INTERNAL v1
        "CONFIDENTIAL": ["Samantha Rivera, badge 0042"],
        "RESTRICTED": ["Samantha Rivera, badge 0042"],
    }
    assert mw.shadow_table(store, "missing").empty


def _random_store(policy: str, seed: int) -> MemoryStore:
    """Random saves, deletes, escalations and untrusted input by sessions of ``main`` and ``bob``."""
    rng = random.Random(seed)
    store = MemoryStore(policy=policy)
    sessions = [store.session(rng.choice(list(Level)), agent, session_id=f"s{n}") for n, agent in enumerate(AGENTS * 3)]
    for _ in range(80):
        session, key = rng.choice(sessions), rng.choice(KEYS)
        roll = rng.random()
        if roll < 0.05:
            session.lower_integrity(source=f"page {rng.randrange(3)}")
        elif roll < 0.15:
            session.escalate(Level(max(session.taint.level, rng.choice(list(Level)))))
        elif roll < 0.7:
            session.memory_save(key, f"{session.agent} {key} {rng.random():.6f}", tags=[rng.choice(["a", "b"])])
        else:
            mw.run_tool(session, "memory_delete", key=key)  # not_found is fine
    for agent in AGENTS:  # a key only an untrusted session wrote: the floors' views differ there at least
        store.session(Level.INTERNAL, agent, integrity="untrusted", source="page 9").memory_save("tip", "buy")
    return store


AGENTS, KEYS = ("main", "bob"), ("k1", "k2", "k3")


@pytest.mark.parametrize("policy", policies.names())
@pytest.mark.parametrize("seed", range(3))
def test_views_from_history_match_what_real_sessions_read(policy, seed):
    # Guards: views.effective_view and _annotate reading store.view(level) (a trusted reader: every floor then
    # hides untrusted versions) or ignoring the floor (a floor of TRUSTED then shown what it never reads).
    store = _random_store(policy, seed)
    versions = {agent: mw.versions_table(store, agent) for agent in AGENTS}
    every = pd.concat(versions.values())
    assert set(every["status"]) == {"current", "superseded", "deleted"}  # every case occurs
    assert set(every["integrity"]) == {"trusted", "untrusted"}
    differ, floors = 0, mw.views.floors(store)
    for agent, level, floor in itertools.product(AGENTS, Level, floors):
        reader = store.session(level, agent, floor=floor)
        view = mw.effective_view(store, agent, level, floor=floor, versions=versions[agent])
        assert view[["key", "content", "classification", "version"]].values.tolist() == [
            [m.key, m.content, str(m.label), m.version] for m in reader.memory_list()
        ]
        seen = versions[agent][versions[agent][seen_column(level, floor)]].set_index("key")
        differ += not seen.equals(versions[agent][versions[agent][seen_column(level)]].set_index("key"))
        for key in (*KEYS, "tip"):
            got = mw.run_tool(reader, "memory_get", key=key)  # existence-oracle may answer "denied"
            expected = (seen.loc[key, "classification"], seen.loc[key, "content"]) if key in seen.index else None
            assert ((got["classification"], got["content"]) if got.get("found") else None) == expected
    assert differ or len(floors) == 1  # somewhere a floor of TRUSTED sees less, where the policy keeps that floor
    for agent, key in itertools.product(AGENTS, (*KEYS, "tip")):
        alone = mw.shadow_table(store, key, agent)
        pd.testing.assert_frame_equal(
            alone, versions[agent][versions[agent]["key"] == key].reset_index(drop=True), check_dtype=False
        )


def test_view_changes_names_new_and_gone_keys():
    store = user_name_store()
    before = mw.effective_view(store, "main", Level.INTERNAL)
    assert mw.view_changes(None, before) == {"new": [], "gone": []}
    assert mw.view_changes(before, before) == {"new": [], "gone": []}
    internal = store.session(Level.INTERNAL)
    internal.memory_save("user-name", "Samantha again")
    internal.memory_save("project", "migration")
    assert mw.view_changes(before, mw.effective_view(store, "main", Level.INTERNAL)) == {
        "new": ["project", "user-name"],
        "gone": [],
    }
    assert mw.view_changes(before, mw.effective_view(store, "nobody", Level.INTERNAL)) == {
        "new": [],
        "gone": ["user-name"],
    }


def test_saved_keys_come_from_successful_saves_of_the_agent(store):
    mw.run_tool(store.session(agent="bob"), "memory_save", key="b", content="x")
    mw.run_tool(store.session(), "memory_save", key="", content="x")
    mw.run_tool(store.session(Level.RESTRICTED), "memory_save", key="z", content="x")
    mw.run_tool(store.session(), "memory_save", key="a", content="x")
    assert mw.saved_keys(store) == ["a", "z"]
    assert mw.saved_keys(store, "bob") == ["b"]


def _audited_store() -> MemoryStore:
    store = MemoryStore(clock=ticking_clock())  # readings: 0 session a, 1 save, 2 session b, 3 get, ...
    a = store.session(Level.PUBLIC, session_id="a")  # 0
    a.memory_save("k", "v")  # 1
    b = store.session(Level.CONFIDENTIAL, session_id="b")  # 2
    mw.run_tool(b, "memory_get", key="missing")  # 3
    a.escalate(Level.INTERNAL, reason="opened the wiki")  # 4
    mw.run_tool(a, "memory_delete", key="k")  # 5: not_found at INTERNAL
    mw.run_tool(b, "memory_list")  # 6
    return store


@pytest.mark.parametrize(
    "filters, seqs",
    [
        ({}, [1, 2, 3, 4]),
        ({"sessions": ["a"]}, [1, 3]),
        ({"tools": ["memory_get", "memory_list"]}, [2, 4]),
        ({"outcomes": ["not_found"]}, [2, 3]),
        ({"levels": ["internal", Level.PUBLIC]}, [1, 3]),
        ({"since": at(3), "until": at(5)}, [2, 3]),
        ({"sessions": ["b"], "since": at(4)}, [4]),
        ({"until": "2026-01-01 12:00:03"}, [1, 2]),  # a time without a zone is UTC
    ],
)
def test_filter_audit(filters, seqs):
    assert mw.filter_audit(_audited_store().audit(), **filters)["seq"].tolist() == seqs


def test_taint_timeline_has_one_stretch_per_level_a_session_held():
    timeline = mw.taint_timeline(_audited_store())
    assert timeline[["session_id", "level", "start", "end", "reason"]].values.tolist() == [
        ["a", "PUBLIC", at(0), at(4), ""],
        ["a", "INTERNAL", at(4), at(6), "opened the wiki"],
        ["b", "CONFIDENTIAL", at(2), at(6), ""],
    ]
    shown = timeline_html(timeline)
    assert shown.count("<div title=") == 3 and "left:66.67%" in shown  # a's escalation, 4 s into 6 s


def test_analyze_table_shows_each_analyzers_terms():
    table = mw.analyze_table("Running runners ran; the runners!", ["none", "porter", "snowball", "trigram"])
    assert table.index.tolist() == ["running", "runners", "ran", "the"]
    assert table["none"].tolist() == ["running", "runners", "ran", "the"]
    assert table["porter"].tolist() == ["run", "runner", "ran", "the"]  # FTS5's own stems, asked of SQLite
    assert table["snowball"].tolist() == ["run", "runner", "ran", "the"]
    assert table.loc["ran", "trigram"] == "ran" and table.loc["running", "trigram"] == "run unn nni nin ing"
    assert mw.analyze_table("What is my name?", ["porter"], query=True).index.tolist() == ["name"]
    assert mw.analyze_table("", ["porter"]).empty


def test_top_results_per_analyzer_with_highlights_and_judgments(trec):
    results = mw.top_results(trec, "bake", ["none", "porter"], k=3)
    assert list(results) == ["none", "porter"]
    assert results["none"].empty  # "Baking" and "baked" are not "bake" without stemming
    (hit,) = results["porter"].to_dict("records")
    assert (hit["rank"], hit["key"], hit["relevant"]) == (1, "cook-bread", None)  # not a collection query
    assert "**Baking**" in hit["snippet"] and "<mark>Baking</mark>" in hit["highlighted"]
    judged = mw.top_results(trec, "how far does she run", ["porter"], k=3)["porter"]  # q1's text
    assert judged["relevant"].tolist() == [key in ("run-morning", "run-marathon") for key in judged["key"]]
    assert judged["relevant"].any()
    assert mw.indexed_session(trec, "porter") is mw.indexed_session(trec, "porter", "main")  # cached


def test_one_locomo_conversation_is_indexed_once_per_analyzer():
    collection = load_locomo(ROOT / "data" / "locomo10.json")
    for analyzer in ("porter", "snowball"):
        session = mw.indexed_session(collection, analyzer, "conv-26")
        assert mw.indexed_session(collection, analyzer, "conv-26") is session  # cached, not indexed again
        assert len(session.memory_list()) == sum(d.agent == "conv-26" for d in collection.documents)


def test_check_verdict_and_steps():
    leak = mw.run_check("existence-oracle", "noninterference", trials=50)
    assert mw.verdict(leak)["verdict"] == "LEAK" and mw.verdict(leak)["steps"] == 2
    steps = mw.steps_table(leak)
    assert steps.columns.tolist() == ["#", "world", "session", "call", "note"]
    assert steps["note"].tolist() == ["", "<- here"] and "memory_get" in steps["call"].iloc[-1]
    passed = mw.run_check("strict", "shadowing", trials=20)
    assert mw.verdict(passed)["verdict"] == "pass" and mw.steps_table(passed).empty


def test_render_helpers_escape_and_colour():
    assert "#2e7d32" in badge("public") and "PUBLIC" in badge(Level.PUBLIC)
    assert highlight("a **<b>** c") == "a <mark>&lt;b&gt;</mark> c"
    assert "nothing visible" in html_table(mw.effective_view(MemoryStore(), "main", "PUBLIC"), empty="nothing visible")
    assert "&lt;script&gt;" in html_table(pd.DataFrame({"key": ["<script>"]}))


# -- one headless test per widget ------------------------------------------------------------------------


NEW = ">new</span>"  # how a view marks an entry that appeared or changed since it was last drawn


def test_simulator_actions_in_one_session_refresh_every_view():
    store = MemoryStore()
    sim = mw.simulator(store, [("alice-public", "PUBLIC", "main"), ("bob-hr", "CONFIDENTIAL", "main")])
    alice, bob = sim.panel("alice-public"), sim.panel("bob-hr")
    assert [p.session.id for p in sim.panels] == ["alice-public", "bob-hr"]
    assert "nothing visible" in alice.view.value and "#2e7d32" in alice.header.value  # green: PUBLIC

    alice.key.value, alice.content.value, alice.tags.value = "user-name", "Sam", "personal"
    alice.buttons["memory_save"].click()
    assert "&quot;saved&quot;: true" in alice.result.value
    assert "Sam" in bob.view.value and NEW in bob.view.value  # bob's view was redrawn by alice's save

    bob.key.value, bob.content.value = "user-name", "Samantha Rivera"
    bob.buttons["memory_save"].click()
    assert "Samantha Rivera" in bob.view.value and "Samantha Rivera" not in alice.view.value
    assert NEW not in alice.view.value  # nothing alice can see changed

    alice.query.value = "Samantha"
    alice.buttons["memory_search"].click()
    assert "&quot;results&quot;: []" in alice.result.value

    assert [level for level, b in alice.escalate_buttons.items() if not b.disabled] == list(Level)[1:]
    alice.reason.value = "opened HR file"
    alice.escalate_buttons[Level.CONFIDENTIAL].click()
    assert "CONFIDENTIAL" in alice.header.value and "Samantha Rivera" in alice.view.value
    assert [level for level, b in alice.escalate_buttons.items() if not b.disabled] == [Level.RESTRICTED]

    bob.key.value = "user-name"
    bob.buttons["memory_delete"].click()  # deleting CONFIDENTIAL uncovers the PUBLIC version for both
    assert "Samantha Rivera" not in alice.view.value and "Sam" in alice.view.value
    assert NEW in alice.view.value and NEW in bob.view.value  # the entry changed under both

    bob.key.value, bob.content.value = "salary", "90k"
    bob.buttons["memory_save"].click()
    assert NEW in bob.view.value and NEW in alice.view.value  # alice is CONFIDENTIAL now
    bob.buttons["memory_delete"].click()
    assert "no longer visible: salary" in bob.view.value and NEW not in bob.view.value

    calls = []
    sim.on_change(lambda: calls.append(1))
    alice.tag.value = "personal"
    alice.buttons["memory_list"].click()
    assert "&quot;memories&quot;" in alice.result.value and calls == [1]

    sim.new_id.value, sim.new_taint.value = "carol", "INTERNAL"
    sim.add_button.click()
    assert sim.panel("carol").session.taint == Level.INTERNAL and "Sam" in sim.panel("carol").view.value
    sim.new_id.value = "carol"
    sim.add_button.click()
    assert "already" in sim.status.value and len(sim.panels) == 3

    audit = store.audit()
    assert audit["tool"].tolist() == [
        "memory_save",
        "memory_save",
        "memory_search",
        "memory_delete",
        "memory_save",
        "memory_delete",
        "memory_list",
    ]
    assert store.taint_events()["reason"].tolist() == ["opened HR file"]
    assert "application/vnd.jupyter.widget-view+json" in sim._repr_mimebundle_()


def test_shadow_inspector_shows_versions_and_who_sees_which():
    store = user_name_store()
    inspector = mw.shadow_inspector(store)
    assert "pick a key" in inspector.table.value and inspector.key.options == ("user-name",)
    inspector.key.value = "user-name"
    inspector.show_button.click()
    shown = inspector.table.value
    assert "4 versions" in shown and shown.count("line-through") == 12  # every cell of the deleted row
    assert shown.count("sees this") == 4  # one version per level
    inspector.key.value = "nothing"
    inspector.show_button.click()
    assert "No version" in inspector.table.value


def test_audit_viewer_filters_the_table_and_draws_the_timeline():
    store = _audited_store()
    viewer = mw.audit_viewer(store)
    assert "4 of 4 calls" in viewer.table.value
    assert viewer.sessions.options == ("a", "b") and "opened the wiki" in viewer.timeline.value
    viewer.sessions.value = ("b",)
    assert "2 of 4 calls" in viewer.table.value
    viewer.outcomes.value = ("not_found",)
    assert "1 of 4 calls" in viewer.table.value and "missing" in viewer.table.value
    viewer.sessions.value, viewer.outcomes.value = (), ()
    viewer.times.index = (2, 3)  # the last two calls
    assert "2 of 4 calls" in viewer.table.value
    viewer.levels.value = ("CONFIDENTIAL",)
    assert "1 of 4 calls" in viewer.table.value

    mw.run_tool(store.session(Level.RESTRICTED, session_id="c"), "memory_save", key="x", content="y")
    assert viewer.sessions.options == ("a", "b", "c") and "c</div>" in viewer.timeline.value
    assert viewer.times.index == (0, 4) and "2 of 5 calls" in viewer.table.value  # the level filter stays


def test_stemming_lab_shows_terms_and_results_side_by_side(trec):
    lab = mw.stemming_lab(trec, ["none", "porter"])
    assert lab.agent.value == "main" and lab.text.value == trec.documents[0].text
    lab.question.value = "how far does she run"
    assert lab.query.value == "how far does she run"
    lab.text.value = "She runs five kilometres"
    lab.run_button.click()
    assert "<mark>run</mark>" in lab.terms.value  # porter's term of "runs" is the query's "run"
    assert lab.results.value.count("<table") == 2 and "<mark>runs</mark>" in lab.results.value
    assert "✔" in lab.results.value  # a judged query: relevant results are ticked
    lab.analyzers.value = ("snowball",)
    lab.query.value = "?"
    lab.run_button.click()
    assert "no search words" in lab.terms.value and "no result" in lab.results.value


def test_policy_lab_runs_a_check_and_shows_the_counterexample():
    lab = mw.policy_lab()
    assert lab.policy.label == "strict" and lab.check.options == (
        "noninterference",
        "write_down",
        "shadowing",
        "integrity_noninterference",
        "laundering",
    )
    lab.policy.label = "existence-oracle"
    assert "classified" in lab.about.value
    lab.trials.value = 50
    lab.run_button.click()
    assert "LEAK" in lab.output.value and "memory_get" in lab.output.value and "&lt;- here" in lab.output.value
    lab.policy.label, lab.check.value, lab.trials.value = "strict", "shadowing", 20
    lab.run_button.click()
    assert "pass" in lab.output.value and "<table" not in lab.output.value
    assert isinstance(lab.last, mw.policylab.NoLeak)


def test_every_widget_displays_in_a_notebook(trec):
    store = MemoryStore()
    for shown in (
        mw.simulator(store, [("x",)]),
        mw.shadow_inspector(store),
        mw.audit_viewer(store),
        mw.stemming_lab(trec, ["porter"]),
        mw.policy_lab(["strict"]),
    ):
        assert "application/vnd.jupyter.widget-view+json" in shown._repr_mimebundle_()
    assert isinstance(mw.simulator(MemoryStore()).panels[0].session, Session)


def test_the_audit_viewer_shows_the_chain_verdict_and_a_broken_link():
    store = MemoryStore()
    store.session(Level.CONFIDENTIAL).memory_save("salary", "90k")
    viewer = mw.AuditViewer(store)
    assert "audit chain verified" in viewer.verified.value and "1 row, 1 version;" in viewer.verified.value
    store.storage.conn.execute("DROP TRIGGER memories_frozen")
    store.storage.conn.execute("UPDATE memories SET classification = 0")
    viewer.refresh()
    assert (
        "audit chain BROKEN" in viewer.verified.value and "trigger memories_frozen is missing" in viewer.verified.value
    )
    assert verification_html(store.verify()) == viewer.verified.value


# -- issue 12: what a teacher hit (the browser test measures the rendered page; these read the HTML) --------


def _all_widget_html(trec) -> str:
    """The HTML every widget shows after some use: views, results, a counterexample, the audit, the timeline."""
    store = user_name_store()
    sim = mw.simulator(store, [("p", "PUBLIC"), ("c", "CONFIDENTIAL"), ("t", "RESTRICTED", "main", "trusted")])
    sim.panel("c").key.value, sim.panel("c").content.value = "user-name", "secret"
    sim.panel("c").feed_button.click()  # untrusted: a hatched row, a ⚠ badge, the integrity pill
    sim.panel("c").buttons["memory_save"].click()
    sim.panel("p").buttons["memory_delete"].click()  # an error result
    lab = mw.policy_lab(["existence-oracle"])
    lab.trials.value = 50
    lab.run_button.click()
    stemming = mw.stemming_lab(trec, ["porter"])
    stemming.query.value = "runs"
    stemming.run_button.click()
    parts = [p.view.value + p.header.value + p.result.value for p in sim.panels]
    viewer, inspector = mw.audit_viewer(store), mw.shadow_inspector(store, "user-name")
    parts += [viewer.table.value, viewer.timeline.value, viewer.verified.value, inspector.table.value, lab.output.value]
    parts += [stemming.terms.value, stemming.results.value, check.noninterference("existence-oracle")._repr_html_()]
    return "".join(parts)


def test_dark_theme_every_background_comes_from_the_theme_or_carries_its_own_white_text(trec):
    """Finding 1: pale hard-coded backgrounds under the dark theme's light text read at 1.2:1."""
    shown = _all_widget_html(trec)
    styles = re.findall(r'style="([^"]*)"', shown)
    backgrounds = [s for s in styles if re.search(r"background(-color)?:", s)]
    assert len(backgrounds) > 20
    for style in backgrounds:
        value = re.search(r"background(?:-color)?:([^;]*)", style).group(1)
        if "var(--jp-" in value:
            continue  # the theme's own colour, or a level's hue mixed into it
        solid = (*render.LEVEL_COLOURS.values(), render.UNTRUSTED_COLOUR, "#2e7d32", "#616161", "#c62828", "#6a1b9a")
        assert value in solid, style
        assert "color:#ffffff" in style, style  # a solid hue always carries white text
    text_colours = {c for c in re.findall(r"(?<![-\w])color:([^;\"]*)", shown)}
    assert text_colours == {"#ffffff"}  # no other hard-coded text colour: the rest is the theme's


def test_the_untrusted_mark_reads_at_wcag_aa_and_is_not_a_levels_hue():
    assert render.contrast("#ffffff", render.UNTRUSTED_COLOUR) >= 4.5
    assert render.UNTRUSTED_COLOUR not in render.LEVEL_COLOURS.values()


@pytest.mark.parametrize("level", list(Level))
def test_every_level_badge_reads_at_wcag_aa(level):
    """Finding 8: the CONFIDENTIAL badge was white on orange at 3.1:1; small text needs 4.5:1."""
    assert render.contrast("#ffffff", render.LEVEL_COLOURS[level]) >= 4.5
    assert render.LEVEL_COLOURS[level] in badge(level) and "color:#ffffff" in badge(level)


def test_contrast_is_wcag_2():
    assert render.contrast("#000000", "#ffffff") == pytest.approx(21)
    assert render.contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert render.contrast("#ef6c00", "#ffffff") < 3.2  # the old CONFIDENTIAL orange


def test_escalation_buttons_wear_their_levels_hue():
    """Finding 8: "↑ INTERNAL" was teal (button_style="info") while INTERNAL is blue everywhere else."""
    panel = mw.simulator(MemoryStore(), [("p", "PUBLIC")]).panel("p")
    for level, button in panel.escalate_buttons.items():
        assert (button.style.button_color, button.style.text_color) == (render.LEVEL_COLOURS[level], "#ffffff")
        assert button.button_style == ""


def _inputs(widget) -> list:
    found = []
    for child in getattr(widget, "children", ()):
        found += _inputs(child)
    if isinstance(
        widget,
        (
            ipywidgets.Text,
            ipywidgets.Textarea,
            ipywidgets.Dropdown,
            ipywidgets.SelectMultiple,
            ipywidgets.IntText,
            ipywidgets.BoundedIntText,
            ipywidgets.SelectionRangeSlider,
            ipywidgets.IntSlider,
            ipywidgets.Combobox,
        ),
    ):
        found.append(widget)
    return found


def test_every_input_of_every_widget_has_a_visible_label(trec):
    """Finding 8: 26 text inputs were labelled only by placeholders (no accessible name)."""
    store = MemoryStore()
    inputs = []
    for shown in (
        mw.simulator(store),
        mw.shadow_inspector(store),
        mw.audit_viewer(store),
        mw.stemming_lab(trec, ["porter"]),
        mw.policy_lab(["strict"]),
    ):
        inputs += _inputs(shown.widget)
    assert len(inputs) > 30
    assert [w for w in inputs if not w.description.strip()] == []


def test_sessions_wrap_to_a_grid_and_tables_scroll_inside_their_panel():
    """Finding 5: at 1024 px sessions stacked one per row, and tables overflowed their panels."""
    sim = mw.simulator(MemoryStore())
    assert sim.row.layout.flex_flow == "row wrap"
    for panel in sim.panels:
        assert panel.widget.layout.width is None and panel.widget.layout.flex == "1 1 290px"
        assert int(panel.widget.layout.min_width.removesuffix("px")) * 3 < 1024 - 60  # three fit side by side
    assert '<div style="overflow-x:auto;max-width:100%"><table' in html_table(pd.DataFrame({"a": [1]}))
    viewer = mw.audit_viewer(MemoryStore())
    filters = viewer.widget.children[1]
    assert filters.layout.flex_flow == "row wrap"  # the level filter wraps below, never off-screen
    assert "scroll sideways" in viewer.table.value


def test_the_audit_viewer_follows_the_store_as_it_changes():
    """Finding 6: the viewer was stale until "refresh"; now every recorded change redraws it."""
    store = MemoryStore()
    viewer, inspector = mw.audit_viewer(store), mw.shadow_inspector(store, "salary")
    hr = store.session(Level.CONFIDENTIAL, session_id="hr")
    assert "hr</div>" in viewer.timeline.value and "0 of 0 calls" in viewer.table.value  # a session started
    hr.memory_save("salary", "90k")
    assert "1 of 1 call<" in viewer.table.value and "1 version<" in inspector.table.value
    mw.simulator(store, [("guest", "PUBLIC")]).panel("guest").buttons["memory_get"].click()
    assert "2 of 2 calls" in viewer.table.value and viewer.sessions.options == ("guest", "hr")
    hr.escalate(Level.RESTRICTED, reason="board papers")
    assert "board papers" in viewer.timeline.value
    viewer.close()
    hr.memory_save("salary", "95k")
    assert "2 of 2 calls" in viewer.table.value and "2 versions" in inspector.table.value


def test_a_failing_listener_warns_and_the_call_stands():
    store = MemoryStore()
    store.listeners.append(lambda: 1 / 0)
    with pytest.warns(RuntimeWarning, match="ZeroDivisionError"):
        saved = mw.run_tool(store.session(), "memory_save", key="k", content="v")
    assert saved["saved"] is True and len(store.audit()) == 1


def test_the_timeline_labels_every_stretch_and_the_slider_readout_is_whole():
    """Finding 6: labels were clipped, the time readout was cut, and multi-selects gave no Ctrl-click hint."""
    store = _audited_store()
    viewer = mw.audit_viewer(store)
    bars = re.findall(r'<div title="([A-Z]+) from[^>]*>([^<]*)</div>', viewer.timeline.value)
    assert bars and all(label in (level, level[0]) for level, label in bars)
    assert all(f"= {level.name[0]}" in viewer.timeline.value for level in Level)  # the initials' legend
    assert "width:140px" not in viewer.timeline.value  # session names are not cut to a fixed width
    assert viewer.times.readout is False
    assert "12:00:01 to 12:00:06 UTC, 1 Jan 2026" in viewer.span.value  # the first call's time and the last's
    assert "Ctrl-click" in viewer.hint.value and all("Ctrl-click" in s.tooltip for s in (viewer.sessions,))


def test_times_read_as_a_person_reads_them_in_seconds_not_microseconds():
    """Issue 23: the time slider's readout showed ISO timestamps to the microsecond, "2026-01-01T12:00:01.000000+00:00
    to ..."; its marks and the table's times showed milliseconds.
    Guards: the span built from the raw ``at`` texts; option labels ``time[11:23]``."""
    viewer = mw.audit_viewer(_audited_store())
    shown = viewer.span.value + viewer.table.value + "".join(label for label, _ in viewer.times.options)
    assert not re.search(r"\d{2}:\d{2}:\d{2}[.,]\d", re.sub(r'title="[^"]*"', "", shown))  # no fraction of a second
    assert "+00:00" not in re.sub(r'title="[^"]*"', "", shown) and "T12:" not in viewer.span.value
    assert [label for label, _ in viewer.times.options] == ["12:00:01", "12:00:03", "12:00:05", "12:00:06"]
    viewer.times.index = (1, 1)
    assert "12:00:03 to 12:00:03 UTC, 1 Jan 2026" in viewer.span.value


def test_one_version_and_one_row_are_singular():
    """Issue 23: "1 versions" in the shadow inspector, and "1 rows"/"1 calls" in the audit viewer.
    Guards: f"{n} versions" whatever n."""
    store = MemoryStore()
    store.session(Level.PUBLIC).memory_save("only", "once")
    assert "<b>only</b>: 1 version<" in mw.shadow_inspector(store, "only").table.value
    assert ": 1 row, 1 version;" in verification_html(store.verify())
    assert "<b>1 of 1 call</b>" in mw.audit_viewer(store).table.value
    store.session(Level.INTERNAL).memory_save("only", "twice")
    assert "<b>only</b>: 2 versions<" in mw.shadow_inspector(store, "only").table.value
    assert ": 2 rows, 2 versions;" in verification_html(store.verify())
