"""Bounded-exhaustive checking: the depth-3 proof for strict, every variant's shortest counterexample, the
reductions against brute force, and the bad inputs (a depth over the budget says how long and runs nothing)."""

import doctest
import itertools
import json
import random
import re
import types
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlab import Level, MemoryStore, check
from memlab.check import bounded, prefixes
from memlab.check.checks import CHECKS, REFUSED_AS_AMBIGUOUS, effective_version
from memlab.check.configurations import configurations
from memlab.check.prefixes import verdicts, walk
from memlab.check.reductions import count_traces, enumerate_traces, normalise
from memlab.check.scenarios import act, memories_of, open_world
from memlab.cli import main
from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.policies import names, resolve
from tests.reference_model import ReferenceStore

# The test's alphabet is smaller than the default (one key, no tag, two levels) so that depth 3 over every
# policy and check runs in seconds; the default alphabet's depth 3 takes minutes (benchmarks/bench_exhaustive.py).
SMALL = check.Alphabet(keys=("k1",), tag=None, levels=(Level.PUBLIC, Level.CONFIDENTIAL))

# The confidentiality checks; the integrity checks' bounded runs are tests/test_check_integrity.py's.
CONFIDENTIALITY = ("noninterference", "write_down", "shadowing")

# (check, policy) -> the shortest counterexample at depth 3: the observer's level and the steps ("!" = high).
SHORTEST = {
    ("noninterference", "frozen-taint"): (
        "PUBLIC",
        ["!high.memory_save(key='k1', content='apple', tags=())", "low.memory_get(key='k1')"],
    ),
    ("noninterference", "existence-oracle"): (
        "PUBLIC",
        ["!high.memory_save(key='k1', content='apple', tags=())", "low.memory_get(key='k1')"],
    ),
    ("noninterference", "write-down-delete"): (
        "PUBLIC",
        [
            "low.memory_save(key='k1', content='apple', tags=())",
            "!high.memory_delete(key='k1')",
            "low.memory_get(key='k1')",
        ],
    ),
    ("noninterference", "global-stats"): (
        "PUBLIC",
        [
            "low.memory_save(key='k1', content='apple', tags=())",
            "!high.memory_save(key='k1', content='apple berry', tags=())",
            "low.memory_search(query='apple', max_results=5)",
        ],
    ),
    ("write_down", "frozen-taint"): (
        "PUBLIC",
        [
            "s1.escalate(level='CONFIDENTIAL')",
            "s2.memory_save(key='k1', content='apple', tags=())",
            "s1.copy(from='k1', to='k1')",
        ],
    ),
    ("shadowing", "shadow-after-match"): (
        "CONFIDENTIAL",
        [
            "s1.memory_save(key='k1', content='apple', tags=())",
            "s2.memory_save(key='k1', content='berry', tags=())",
            "s2.memory_search(query='apple', max_results=5)",
        ],
    ),
}

# Distinct traces of at most 3 steps over SMALL, after reductions and before, per check.
DEPTH_3 = {"noninterference": (828, 3768), "shadowing": (1837, 13104), "write_down": (1732, 5652)}


def _described(found):
    return [("!" if step.high else "") + step.describe() for step in found.steps]


@pytest.mark.parametrize("name", CONFIDENTIALITY)
def test_strict_has_a_bounded_proof_to_depth_3(name):
    result = check.exhaustive("strict", check=name, depth=3, alphabet=SMALL, budget=None)
    assert not result.leak, str(result)
    assert (result.traces_after, result.traces_before) == DEPTH_3[name]
    assert result.traces == result.traces_after  # every distinct trace was judged
    text = str(result)
    assert text.startswith(f"bounded proof: {name} holds under policy strict for every trace of at most 3 steps")
    assert f"{result.traces_after:,} distinct traces after reductions ({result.traces_before:,} before)" in text
    assert ("no two worlds differing only above a level were told apart" in text) == (name == "noninterference")


@pytest.mark.parametrize("name,policy", sorted(SHORTEST))
def test_every_variant_has_its_shortest_counterexample(name, policy):
    result = check.exhaustive(policy, check=name, depth=3, alphabet=SMALL, budget=None)
    level, steps = SHORTEST[name, policy]
    assert result.leak, str(result)
    assert (result.counterexample.level.name, _described(result.counterexample)) == (level, steps)
    assert result.counterexample.replay() is not None
    # Shortest: the same check over one step fewer finds nothing.
    shorter = check.exhaustive(policy, check=name, depth=len(steps) - 1, alphabet=SMALL, budget=None)
    assert not shorter.leak


@pytest.mark.parametrize("name", CONFIDENTIALITY)
def test_variants_the_check_does_not_catch_pass_it_to_depth_2(name):
    """Depth 2 only: a full depth-3 run per variant and check would add minutes (they are in the benchmark)."""
    caught = {policy for check_name, policy in SHORTEST if check_name == name}
    for policy in sorted(set(names()) - caught - {"strict"}):
        assert not check.exhaustive(policy, check=name, depth=2, alphabet=SMALL, budget=None).leak, policy


def _raw_traces(symbols, depth):
    for length in range(1, depth + 1):
        yield from itertools.product(range(len(symbols)), repeat=length)


@pytest.mark.parametrize("name", CONFIDENTIALITY)
@pytest.mark.parametrize("alphabet,depth", [(SMALL, 3), (check.Alphabet(), 2)])
def test_every_trace_reduces_to_one_that_is_enumerated(name, alphabet, depth):
    for configuration in configurations(name, alphabet):
        symbols, rules = configuration.symbols, configuration.rules
        index = {symbol.step: number for number, symbol in enumerate(symbols)}
        kept = {
            tuple(index[step] for step in trace)
            for length in range(1, depth + 1)
            for trace in enumerate_traces(symbols, 3, rules, length)
        }
        assert sum(count_traces(symbols, 3, rules, depth)) == len(kept)
        reduced = {normalise(trace, symbols, 3, rules) for trace in _raw_traces(symbols, depth)}
        assert reduced - {None} == kept  # every kept trace is needed, and every trace has a kept one
        assert all(normalise(trace, symbols, 3, rules) == trace for trace in kept)


@pytest.mark.parametrize("policy", sorted({policy for _, policy in SHORTEST}))
def test_a_trace_and_its_reduction_get_the_same_verdict_from_the_real_store(policy):
    _assert_reductions_keep_the_real_stores_verdicts(policy, check.Alphabet(), draws=6)


def test_a_leak_seen_by_a_write_survives_the_reductions():
    """Write-down-delete shows in the observer's own delete (not found, where its memory was): a low write is
    judged, so the trace is kept as it is. Guards: noninterference judging only the observer's reads
    (``judged`` built from ``symbol.read``), which would reduce this trace to nothing."""
    (configuration, *_) = configurations("noninterference", SMALL)
    symbols = configuration.symbols
    wanted = [
        "low.memory_save(key='k1', content='apple', tags=())",
        "!high.memory_delete(key='k1')",
        "low.memory_delete(key='k1')",
    ]
    trace = tuple(next(n for n, symbol in enumerate(symbols) if _described_step(symbol.step) == w) for w in wanted)
    assert normalise(trace, symbols, 3, configuration.rules) == trace
    steps = [symbols[number].step for number in trace]
    judge = CHECKS.get("noninterference").judge
    assert judge(resolve("write-down-delete"), configuration.level, configuration.actors, steps) is not None


def _described_step(step):
    return ("!" if step.high else "") + step.describe()


def test_the_result_serialises_as_json():
    document = json.loads(json.dumps(check.exhaustive("existence-oracle", depth=2, alphabet=SMALL).as_dict()))
    assert document["verdict"] == "LEAK" and document["depth"] == 2
    assert document["alphabet"] == {
        "keys": ["k1"],
        "contents": ["apple", "berry"],
        "tag": None,
        "levels": ["PUBLIC", "CONFIDENTIAL"],
    }
    assert document["counterexample"]["steps"][0].endswith("[second world]")
    proof = check.exhaustive("strict", check="shadowing", depth=1, alphabet=SMALL).as_dict()
    assert proof["verdict"] == "bounded proof" and proof["counterexample"] is None


def _counting_steps(monkeypatch, cost=0.0):
    """Count the steps the prefix-sharing walk runs, each advancing a fake clock (``bounded``'s) by ``cost``."""
    clock = {"now": 0.0, "steps": 0}
    real = prefixes.act

    def counted(*arguments):
        clock["now"] += cost
        clock["steps"] += 1
        return real(*arguments)

    monkeypatch.setattr(prefixes, "act", counted)
    monkeypatch.setattr(bounded, "time", types.SimpleNamespace(perf_counter=lambda: clock["now"]))
    return clock


def test_a_depth_over_the_budget_says_how_long_and_runs_nothing(monkeypatch):
    steps = _counting_steps(monkeypatch, cost=0.001)
    judged = []
    monkeypatch.setattr(CHECKS.get("noninterference"), "judge", lambda *arguments: judged.append(arguments))
    with pytest.raises(check.BudgetExceeded, match=r"depth 6 would take about .* over the budget of 1 s"):
        check.exhaustive("strict", depth=6, budget=1)
    # Only the timed sample ran: 6 prefixes of 5 steps in two worlds, and the traces each begins (one more step).
    sample = steps["steps"]
    assert 0 < sample < 6 * 2 * (5 + len(configurations("noninterference", check.Alphabet())[0].symbols))
    assert judged == []


def test_the_estimate_is_the_measured_cost_of_a_trace(monkeypatch):
    """The estimate is the sample's measured time over the traces it judged, times the traces counted: with
    every step costing a fixed (fake) time, twice the cost is twice the estimate, and nothing else enters it.
    Guards: a constant cost per trace."""
    counted = sum(count_traces_of("write_down", SMALL, 3))
    estimates = []
    for cost in (0.001, 0.002):
        steps = _counting_steps(monkeypatch, cost)
        guess = check.estimate("strict", check="write_down", depth=3, alphabet=SMALL)
        estimates.append(guess)
        assert guess.traces == counted
        assert guess.seconds_per_trace > 0 and steps["steps"] > 0
    assert estimates[1].seconds_per_trace == pytest.approx(2 * estimates[0].seconds_per_trace)
    assert estimates[1].seconds == pytest.approx(2 * estimates[0].seconds)


def count_traces_of(name, alphabet, depth):
    return [
        count
        for configuration in configurations(name, alphabet)
        for count in count_traces(configuration.symbols, 3, configuration.rules, depth)
    ]


def test_bad_arguments_are_clear_errors():
    for depth in (0, -1, "3", 2.0, True):
        with pytest.raises(InvalidArgument, match="depth"):
            check.exhaustive("strict", depth=depth)
    with pytest.raises(ValueError, match="unknown check 'leaks'"):
        check.exhaustive("strict", check="leaks")
    with pytest.raises(ValueError, match="unknown policy 'lax'"):
        check.exhaustive("lax")
    with pytest.raises(ValueError, match="at least two levels"):
        check.Alphabet(levels=(Level.PUBLIC,))


def test_cli_exhaustive(capsys, tmp_path):
    assert main(["check", "--exhaustive", "--depth", "1", "--policy", "strict"]) == 0
    assert "bounded proof: noninterference holds under policy strict" in capsys.readouterr().out
    assert (
        main(["check", "--exhaustive", "--depth", "2", "--policy", "existence-oracle", "--check", "noninterference"])
        == 1
    )
    assert "shortest counterexample (2 steps" in capsys.readouterr().out
    assert main(["check", "--exhaustive", "--depth", "6", "--budget", "1"]) == 2
    error = capsys.readouterr().err
    left_out, refusal = error.splitlines()  # first the integrity check left out where a policy has no floors
    assert left_out.startswith("memlab check: left out (no trusted floor under the policy): integrity-noninterference")
    assert refusal.startswith("memlab check: depth 6 would take about") and "raise the budget" in refusal
    assert main(["check", "--exhaustive", "--depth", "0", "--policy", "strict"]) == 2
    assert "the depth must be a whole number of steps, at least 1" in capsys.readouterr().err
    assert main(["check", "--exhaustive", "--depth", "1", "--save", str(tmp_path / "table.json")]) == 2
    assert "--save writes the random checks' table" in capsys.readouterr().err
    assert not (tmp_path / "table.json").exists()


def _reference_answer(reference, session, step, number):
    """What the reference model says ``step`` returns, in the shape ``_real_answer`` gives the store's result."""
    arguments = dict(step.arguments)
    taint = session.taint
    if step.tool == "memory_save":
        saved = reference.save(
            "main", taint, arguments["key"], f"{arguments['content']} #{number}", arguments["tags"], step.actor
        )
        return ("saved", saved.key, saved.content, saved.classification, saved.version)
    if step.tool == "memory_delete":
        deleted = reference.delete("main", taint, arguments["key"])
        return None if deleted is None else ("deleted", deleted.key, deleted.classification)
    if step.tool == "memory_get":
        found = reference.effective("main", taint, arguments["key"])
        return None if found is None else (found.key, found.content, found.classification, found.version)
    if step.tool == "memory_list":
        return sorted(
            (v.key, v.content, v.classification, v.version) for v in reference.list("main", taint, arguments["tag"])
        )
    return sorted(reference.matching_keys("main", taint, arguments["query"]))


def _real_answer(step, result):
    if isinstance(result, tuple) and result[:1] == ("error",):
        return None
    if step.tool == "memory_save":
        return ("saved", result.key, result.content, result.classification, result.version)
    if step.tool == "memory_delete":
        return ("deleted", result.key, result.classification)
    if step.tool == "memory_get":
        return None if result is None else (result.key, result.content, result.classification, result.version)
    memories = memories_of(result)
    if step.tool == "memory_list":
        return sorted((m.key, m.content, m.classification, m.version) for m in memories)
    return sorted(m.key for m in memories)


def test_the_real_store_answers_every_enumerated_trace_as_the_reference_model_does():
    """The reference model (tests/reference_model.py) as the oracle: over every kept shadowing trace of at most
    3 steps over the tests' alphabet, under strict, each step's answer from the real store is the model's.
    Guards: the store under write-down-delete (a delete at CONFIDENTIAL removes the PUBLIC version), which
    fails here."""
    policy = resolve("strict")
    for configuration in configurations("shadowing", SMALL):
        for length in (1, 2, 3):
            for steps in enumerate_traces(configuration.symbols, 3, configuration.rules, length):
                world = open_world(policy, configuration.actors, steps, with_high=True)
                reference = ReferenceStore()
                try:
                    for number, step in enumerate(steps):
                        session = world.sessions[step.actor]
                        expected = _reference_answer(reference, session, step, number)
                        assert _real_answer(step, act(session, step, number)) == expected, (steps, number)
                finally:
                    world.store.close()


def test_cli_exhaustive_json_and_the_exit_status_over_every_policy(capsys):
    # One JSON document; over every policy only strict's leak would fail the run (the variants exist to leak).
    # Guards: the exit status counting a variant's leak when no --policy is named.
    assert main(["check", "--exhaustive", "--depth", "2", "--check", "noninterference", "--json"]) == 0
    results = json.loads(capsys.readouterr().out)
    verdicts = {result["policy"]: result["verdict"] for result in results}
    assert verdicts["strict"] == "bounded proof" and verdicts["existence-oracle"] == "LEAK"


def _verdicts_of_the_judge(policy, name, configuration, length):
    judge = CHECKS.get(name).judge
    for steps in enumerate_traces(configuration.symbols, 3, configuration.rules, length):
        yield steps, judge(policy, configuration.level, configuration.actors, steps) is not None


@pytest.mark.parametrize("name,policy", sorted(SHORTEST))
def test_prefix_sharing_gives_every_trace_the_judges_verdict(name, policy):
    """Every kept trace of at most 3 steps over the tests' alphabet, in the same order and with the same verdict
    as the check's judge gives it replayed alone from empty stores. Guards: noninterference's walk forgetting a
    difference seen before the last step (``leak = None if seen_alone == seen_with_high else number``)."""
    policy = resolve(policy)
    leaks = 0
    for configuration in configurations(name, SMALL):
        for length in (1, 2, 3):
            shared = list(verdicts(policy, name, configuration, 3, length))
            assert shared == list(_verdicts_of_the_judge(policy, name, configuration, length))
            leaks += sum(leaked for _, leaked in shared)
    assert leaks > 0


def _rows(connection):
    """Every row, with what is random in each replay masked (each version's salt, and the hashes built on it)."""
    return [re.sub(r"X'[0-9A-F]+'|'[0-9a-f]{64}'", "?", line) for line in connection.iterdump()]


@pytest.mark.parametrize("name", CONFIDENTIALITY)
def test_every_trace_ends_with_the_stores_its_steps_make_from_empty_ones(name):
    """The working stores restored from a prefix's images hold, at each trace's end, the database its steps make
    when replayed alone (every row: versions, indexes, sessions, taint events, the audit; salts and hashes are
    random in each replay), with an audit chain that verifies.
    Guards: a restore without the write outside memlab's transactions (``UPDATE temp.restored``), after which the
    storage appends to the audit chain from a stale cached head."""
    policy = resolve("strict")
    for configuration in configurations(name, SMALL)[:2]:
        # Every trace is walked (each restores what its predecessor changed); every 9th is replayed to compare.
        for steps, branch in itertools.islice(walk(policy, name, configuration, 3, 3), 0, None, 9):
            fresh = open_world(policy, configuration.actors, steps, with_high=True)
            try:
                for number, step in enumerate(steps):
                    act(fresh.sessions[step.actor], step, number)
                fresh.store.storage.flush_sessions()
                world = branch.slots[-1].world  # the world with every step (noninterference's second)
                assert _rows(world.store.storage.conn) == _rows(fresh.store.storage.conn), steps
                assert world.store.verify().ok
            finally:
                fresh.store.close()


def test_the_policy_lab_pages_lattice_examples_are_what_memlab_labels_does():
    """The ``>>>`` examples of docs/policy-lab.md run as doctests: the page's lattice semantics is the code's."""
    page = (Path(__file__).resolve().parent.parent / "docs" / "policy-lab.md").read_text(encoding="utf-8")
    examples = "\n".join(re.findall(r"```pycon\n(.*?)```", page, re.DOTALL))
    test = doctest.DocTestParser().get_doctest(examples, {}, "docs/policy-lab.md", "docs/policy-lab.md", 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# -- over a label alphabet: compartments ------------------------------------------------------------------

# The label alphabet (PUBLIC, CONFIDENTIAL:hr, CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal) with the tests' names.
LABELS = check.Alphabet.compartments(keys=("k1",), tag=None)

# Distinct traces of at most 2 steps over LABELS, after reductions and before, per check (strict and
# refuse-ambiguous alike: the counts depend on the alphabet only).
LABELS_DEPTH_2 = {"noninterference": (440, 3120), "shadowing": (564, 2720), "write_down": (520, 1236)}

# (check, policy) -> the shortest counterexample over LABELS at depth 3: the observer's (or leaking save's)
# label, the sessions' labels, and the steps ("!" = high). Policies that do not keep compartments are refused.
SHORTEST_OVER_LABELS = {
    ("noninterference", "newest-over-all-labels"): (
        "CONFIDENTIAL:hr",
        ["low (CONFIDENTIAL:hr)", "high (PUBLIC->CONFIDENTIAL:legal)"],
        [
            "low.memory_save(key='k1', content='apple', tags=())",
            "!high.memory_save(key='k1', content='apple', tags=())",
            "low.memory_get(key='k1')",
        ],
    ),
    ("shadowing", "newest-over-all-labels"): (
        "CONFIDENTIAL:hr",
        ["s1 (PUBLIC)", "s2 (CONFIDENTIAL:hr)"],
        [
            "s2.memory_save(key='k1', content='apple', tags=())",
            "s1.memory_save(key='k1', content='apple', tags=())",
            "s2.memory_get(key='k1')",
        ],
    ),
    ("noninterference", "frozen-taint"): (
        "PUBLIC",
        ["low (PUBLIC)", "high (PUBLIC->CONFIDENTIAL:hr)"],
        ["!high.memory_save(key='k1', content='apple', tags=())", "low.memory_get(key='k1')"],
    ),
    ("write_down", "frozen-taint"): (
        "PUBLIC",
        ["s1 (PUBLIC)", "s2 (CONFIDENTIAL:hr)"],
        [
            "s1.escalate(level='CONFIDENTIAL:hr')",
            "s2.memory_save(key='k1', content='apple', tags=())",
            "s1.copy(from='k1', to='k1')",
        ],
    ),
    ("noninterference", "existence-oracle"): (
        "CONFIDENTIAL:hr",
        ["low (CONFIDENTIAL:hr)", "high (PUBLIC->CONFIDENTIAL:legal)"],
        ["!high.memory_save(key='k1', content='apple', tags=())", "low.memory_get(key='k1')"],
    ),
    ("noninterference", "write-down-delete"): (
        "PUBLIC",
        ["low (PUBLIC)", "high (PUBLIC->CONFIDENTIAL:hr)"],
        [
            "low.memory_save(key='k1', content='apple', tags=())",
            "!high.memory_delete(key='k1')",
            "low.memory_get(key='k1')",
        ],
    ),
}


def test_the_label_alphabet_is_the_stated_lattice():
    assert [str(label) for label in LABELS.levels] == [
        "PUBLIC",
        "CONFIDENTIAL:hr",
        "CONFIDENTIAL:legal",
        "CONFIDENTIAL:hr,legal",
    ]
    assert str(LABELS).endswith("labels PUBLIC, CONFIDENTIAL:hr, CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal")
    assert LABELS.over_labels and not SMALL.over_labels
    # A label without categories is its level, in any spelling and order.
    same = check.Alphabet(keys=("k1",), tag=None, levels=("confidential:legal,hr", "public", "CONFIDENTIAL:hr"))
    assert same.levels[0] == Level.PUBLIC and [str(label) for label in same.levels][1:] == [
        "CONFIDENTIAL:hr",
        "CONFIDENTIAL:hr,legal",
    ]


def test_the_configurations_follow_the_lattice():
    """The high session is raised to every label that does not flow to the observer's (incomparable ones
    included), from a start that flows to it; a write-down session escalates only up the lattice.
    Guards: high labels chosen as those strictly above the bound (``_flows(bound, label) and label != bound``),
    which leaves out CONFIDENTIAL:legal against an observer at CONFIDENTIAL:hr."""
    seen = {
        (str(c.level), str(c.actors[1].start), str(c.actors[1].taint))
        for c in configurations("noninterference", LABELS)
    }
    assert ("CONFIDENTIAL:hr", "PUBLIC", "CONFIDENTIAL:legal") in seen
    assert ("CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:legal") in seen
    assert not any(bound == "CONFIDENTIAL:hr,legal" for bound, _, _ in seen)  # the top hides nothing
    assert not any(high in ("PUBLIC", "CONFIDENTIAL:hr") for bound, _, high in seen if bound == "CONFIDENTIAL:hr")
    assert len(seen) == 20
    for configuration in configurations("write_down", LABELS):
        for symbol in configuration.symbols:
            if symbol.step.tool == "escalate":
                start = next(actor.start for actor in configuration.actors if actor.name == symbol.step.actor)
                target = dict(symbol.step.arguments)["level"]
                assert str(start) != target and Label.parse(start).can_flow_to(Label.parse(target))


@pytest.mark.parametrize("policy", ["strict", "refuse-ambiguous"])
@pytest.mark.parametrize("name", CONFIDENTIALITY)
def test_the_safe_shadowing_rules_have_a_bounded_proof_over_labels(name, policy):
    result = check.exhaustive(policy, check=name, depth=2, alphabet=LABELS, budget=None)
    assert not result.leak, str(result)
    assert (result.traces_after, result.traces_before) == LABELS_DEPTH_2[name]
    assert result.traces == result.traces_after
    assert "labels PUBLIC, CONFIDENTIAL:hr, CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal" in str(result)


def test_strict_over_labels_has_several_maximal_versions_to_judge():
    """The label proof is not empty: a session at CONFIDENTIAL:hr,legal reading a key saved in both compartments
    gets the newest of the two, and the shadowing judge expects exactly that. Guards: the judge's newest of several
    maximal versions taken as the oldest (``max`` -> ``min`` in ``checks.effective_version``)."""
    actors = (check.Actor("s1", Label.parse("CONFIDENTIAL:hr")), check.Actor("s2", Label.parse("CONFIDENTIAL:legal")))
    both = check.Actor("s3", Label.parse("CONFIDENTIAL:hr,legal"))
    steps = [
        check.Step("s1", "memory_save", (("key", "k1"), ("content", "apple"), ("tags", ()))),
        check.Step("s2", "memory_save", (("key", "k1"), ("content", "berry"), ("tags", ()))),
        check.Step("s3", "memory_get", (("key", "k1"),)),
    ]
    world = open_world(resolve("strict"), (*actors, both), steps, with_high=True)
    try:
        results = [act(world.sessions[step.actor], step, number) for number, step in enumerate(steps)]
    finally:
        world.store.close()
    assert results[2].content == "berry #1"
    assert CHECKS.get("shadowing").judge(resolve("strict"), None, (*actors, both), steps) is None
    refused = CHECKS.get("shadowing").judge(resolve("refuse-ambiguous"), None, (*actors, both), steps)
    assert refused is None  # refuse answers "ambiguous", and returns neither version


@pytest.mark.parametrize("name,policy", sorted(SHORTEST_OVER_LABELS))
def test_every_variant_has_its_shortest_counterexample_over_labels(name, policy):
    result = check.exhaustive(policy, check=name, depth=3, alphabet=LABELS, budget=None)
    level, actors, steps = SHORTEST_OVER_LABELS[name, policy]
    assert result.leak, str(result)
    found = result.counterexample
    shown = [row["session"] for row in found.rows()]
    assert (str(found.level), sorted(set(shown)), _described(found)) == (level, sorted(actors), steps)
    assert found.replay() is not None
    if len(steps) > 1:
        assert not check.exhaustive(policy, check=name, depth=len(steps) - 1, alphabet=LABELS, budget=None).leak


def test_write_down_across_compartments_is_a_leak():
    """Content saved at CONFIDENTIAL:hr,legal copied into a CONFIDENTIAL:hr record (frozen-taint) stays at its level
    but loses a category: a session at CONFIDENTIAL:hr reads legal's content. Guards: the write-down judge
    comparing levels only (``first.level > result.label.level``)."""
    actors = (
        check.Actor("s1", Label.parse("CONFIDENTIAL:hr")),
        check.Actor("s2", Label.parse("CONFIDENTIAL:hr,legal")),
    )
    steps = [
        check.Step("s2", "memory_save", (("key", "k1"), ("content", "apple"), ("tags", ()))),
        check.Step("s1", "escalate", (("level", "CONFIDENTIAL:hr,legal"),)),
        check.Step("s1", "copy", (("from", "k1"), ("to", "k1"))),
    ]
    found = CHECKS.get("write_down").judge(resolve("frozen-taint"), None, actors, steps)
    assert found is not None and str(found.level) == "CONFIDENTIAL:hr"
    assert found.observed == "'apple #0' saved at CONFIDENTIAL:hr"
    assert CHECKS.get("write_down").judge(resolve("strict"), None, actors, steps) is None


def test_the_variants_a_check_does_not_catch_pass_it_over_labels_to_depth_2():
    for name in CONFIDENTIALITY:
        caught = {policy for check_name, policy in SHORTEST_OVER_LABELS if check_name == name}
        for policy in sorted(set(names()) - caught - {"strict"}):
            if check.keeps_compartments(policy):
                assert not check.exhaustive(policy, check=name, depth=2, alphabet=LABELS, budget=None).leak, policy


@pytest.mark.parametrize("name", CONFIDENTIALITY)
def test_every_trace_over_labels_reduces_to_one_that_is_enumerated(name):
    """The reductions over labels, against brute force (as ``test_every_trace_reduces_to_one_that_is_enumerated``)."""
    for configuration in configurations(name, LABELS):
        symbols, rules = configuration.symbols, configuration.rules
        index = {symbol.step: number for number, symbol in enumerate(symbols)}
        kept = {
            tuple(index[step] for step in trace)
            for length in (1, 2)
            for trace in enumerate_traces(symbols, 3, rules, length)
        }
        reduced = {normalise(trace, symbols, 3, rules) for trace in _raw_traces(symbols, 2)}
        assert reduced - {None} == kept


@pytest.mark.parametrize("policy", ["newest-over-all-labels", "refuse-ambiguous", "frozen-taint"])
def test_a_trace_over_labels_and_its_reduction_get_the_same_verdict_from_the_real_store(policy):
    _assert_reductions_keep_the_real_stores_verdicts(policy, check.Alphabet.compartments(), draws=2)


def test_prefix_sharing_over_labels_gives_every_trace_the_judges_verdict():
    """newest-over-all-labels' shadowing leak, every kept trace of at most 3 steps of the configuration that shows
    it (s1 at PUBLIC, s2 at CONFIDENTIAL:hr): the walk's verdicts are the judge's, from empty stores."""
    policy = resolve("newest-over-all-labels")
    (configuration,) = [
        c
        for c in configurations("shadowing", LABELS)
        if [str(a.start) for a in c.actors] == ["PUBLIC", "CONFIDENTIAL:hr"]
    ]
    leaks = 0
    for length in (1, 2, 3):
        shared = list(verdicts(policy, "shadowing", configuration, 3, length))
        assert shared == list(_verdicts_of_the_judge(policy, "shadowing", configuration, length))
        leaks += sum(leaked for _, leaked in shared)
    assert leaks > 0


def test_bad_label_alphabets_are_clear_errors():
    with pytest.raises(InvalidArgument, match=r"alphabet label 'CONFIDENTIAL:': .* no categories after it"):
        check.Alphabet(levels=("PUBLIC", "CONFIDENTIAL:"))
    with pytest.raises(InvalidArgument, match=r"alphabet label 'SECRET:hr'"):
        check.Alphabet(levels=("PUBLIC", "SECRET:hr"))
    with pytest.raises(InvalidArgument, match="at least one category"):
        check.Alphabet.compartments(())
    with pytest.raises(InvalidArgument, match="categories are a list of names"):
        check.Alphabet.compartments("hr")
    with pytest.raises(InvalidArgument, match=r"is not a name"):
        check.Alphabet.compartments(("HR!",))
    with pytest.raises(InvalidArgument, match=rf"at most {check.MAX_LABELS} levels or labels, not 8"):
        check.Alphabet.compartments(("hr", "legal", "ops"))
    too_many = [
        "PUBLIC",
        "INTERNAL",
        "CONFIDENTIAL",
        "RESTRICTED",
        "CONFIDENTIAL:hr",
        "CONFIDENTIAL:legal",
        "INTERNAL:hr",
    ]
    with pytest.raises(InvalidArgument, match=rf"at most {check.MAX_LABELS}"):
        check.Alphabet(levels=tuple(too_many))
    with pytest.raises(InvalidArgument, match="'global-stats' does not keep compartments"):
        check.exhaustive("global-stats", depth=1, alphabet=LABELS)
    with pytest.raises(InvalidArgument, match="'shadow-after-match' does not keep compartments"):
        check.exhaustive_all(["strict", "shadow-after-match"], depth=1, alphabet=LABELS)


def test_cli_exhaustive_over_labels(capsys):
    argv = ["check", "--exhaustive", "--depth", "1", "--check", "shadowing", "--alphabet", "compartments"]
    assert main([*argv, "--policy", "strict"]) == 0
    assert "labels PUBLIC, CONFIDENTIAL:hr, CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal" in capsys.readouterr().out
    assert main([*argv, "--categories", "ops", "--json"]) == 0
    captured = capsys.readouterr()
    results = json.loads(captured.out)
    assert results[0]["alphabet"]["levels"] == ["PUBLIC", "CONFIDENTIAL:ops"]
    assert "global-stats" not in {result["policy"] for result in results}
    assert captured.err == "memlab check: left out (no compartments): shadow-after-match, global-stats\n"
    for extra, message in [
        (["--categories", ","], "a compartments alphabet needs at least one category"),
        (["--categories", "hr,legal,ops"], "at most 6 levels or labels, not 8"),
        (["--categories", "HR!"], "category 'HR!' is not a name"),
        (["--policy", "global-stats"], "'global-stats' does not keep compartments"),
    ]:
        assert main([*argv, *extra]) == 2
        assert message in capsys.readouterr().err
    assert main(["check", "--exhaustive", "--depth", "1", "--categories", "hr"]) == 2
    assert "add --alphabet compartments" in capsys.readouterr().err
    # A depth the label alphabet cannot finish says how long it would take, and runs nothing.
    assert main([*argv[:2], "--depth", "4", *argv[4:], "--policy", "strict"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("memlab check: depth 4 would take about") and "raise the budget" in error


def test_the_shadowing_judge_expects_no_version_of_an_ambiguous_key_under_refuse():
    """Two maximal versions (hr's, then legal's) at CONFIDENTIAL:hr,legal: ``newest`` expects legal's, ``refuse``
    expects neither (a store returning either would be caught). Guards: the judge without its ``refuse`` case
    (``return REFUSED_AS_AMBIGUOUS``), which would accept the newest under refuse."""
    hr, legal, both = (Label.parse(text) for text in ("CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal"))
    store = MemoryStore()
    first = store.session(hr).memory_save("k1", "apple")
    second = store.session(legal).memory_save("k1", "berry")
    current = {("k1", hr): (first, True, 0), ("k1", legal): (second, True, 1)}
    assert effective_version(resolve("strict"), current, both, "k1") == second
    assert effective_version(resolve("refuse-ambiguous"), current, both, "k1") == REFUSED_AS_AMBIGUOUS
    # One maximal version: no ambiguity.
    assert effective_version(resolve("refuse-ambiguous"), current, hr, "k1") == first
    assert effective_version(resolve("strict"), {**current, ("k1", legal): (second, False, 2)}, both, "k1") == first


_POOL = [
    Label.parse(text)
    for text in (
        "PUBLIC",
        "INTERNAL",
        "CONFIDENTIAL",
        "INTERNAL:hr",
        "CONFIDENTIAL:hr",
        "CONFIDENTIAL:legal",
        "CONFIDENTIAL:hr,legal",
        "RESTRICTED:legal",
    )
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_POOL), min_size=2, max_size=check.MAX_LABELS, unique=True))
def test_any_label_alphabet_is_ordered_and_configured_by_the_lattice(labels):
    """For any alphabet of labels: the levels are kept in an order where a label follows every label that flows
    to it, and noninterference has exactly one configuration per (bound, start, raised) with the raised label not
    flowing to the bound and the start flowing to the raised one. Guards: the labels sorted by name
    (``_lattice_order`` returning ``(str(label),)``), which puts CONFIDENTIAL before PUBLIC."""
    alphabet = check.Alphabet(keys=("k1",), tag=None, levels=tuple(labels))
    ordered = [Label.parse(label) for label in alphabet.levels]
    assert sorted(ordered, key=str) == sorted(labels, key=str)
    for i, earlier in enumerate(ordered):
        assert not any(later != earlier and later.can_flow_to(earlier) for later in ordered[i + 1 :])
    expected = {
        (str(bound), str(start), str(raised))
        for bound in labels
        for raised in labels
        if not raised.can_flow_to(bound)
        for start in labels
        if start.can_flow_to(raised)
    }
    found = [
        (str(c.level), str(c.actors[1].start), str(c.actors[1].taint))
        for c in configurations("noninterference", alphabet)
    ]
    assert len(found) == len(set(found)) and set(found) == expected


def _assert_reductions_keep_the_real_stores_verdicts(policy, alphabet, draws):
    """Random traces of 3 steps of every configuration of every check over ``alphabet``: a trace and its
    reduction leak alike under the real store."""
    rng = random.Random(policy)
    for name in CONFIDENTIALITY:
        judge = CHECKS.get(name).judge
        for configuration in configurations(name, alphabet):
            symbols = configuration.symbols
            for _ in range(draws):
                trace = tuple(rng.randrange(len(symbols)) for _ in range(3))
                reduced = normalise(trace, symbols, 3, configuration.rules)
                steps = [symbols[number].step for number in trace]
                leaks = judge(resolve(policy), configuration.level, configuration.actors, steps) is not None
                kept = [] if reduced is None else [symbols[number].step for number in reduced]
                leaks_reduced = bool(kept) and (
                    judge(resolve(policy), configuration.level, configuration.actors, kept) is not None
                )
                assert leaks == leaks_reduced, (name, trace, reduced)
