"""The integrity checks (memlab.check.integrity): strict passes both, random and bounded; each integrity variant is
caught with its shortest counterexample; the bounded walk gives every trace the judge's verdict. Strict with two keys
at depth 3 (where one ranking index for both grades shows) takes 20 s: the random search covers it here."""

import itertools
import re

import pytest

from memlab import Level, check
from memlab.check.checks import CHECKS
from memlab.check.configurations import configurations
from memlab.check.integrity import keeps_floors, launders, second_world
from memlab.check.prefixes import verdicts, walk
from memlab.check.reductions import count_traces, enumerate_traces, normalise
from memlab.check.results import Actor, Step
from memlab.check.scenarios import act, open_world
from memlab.cli import main
from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label
from memlab.policies import names, resolve

INTEGRITY = ("integrity_noninterference", "laundering")

# One key, one content word, no tag, two levels: depth 3 over every variant runs in seconds. One ranking index for
# both grades needs two keys and words (an untrusted version of the observer's own key is shadowed in the levels'
# index too): TWO_KEYS.
SMALL = check.Alphabet(keys=("k1",), contents=("apple",), tag=None, levels=(Level.PUBLIC, Level.CONFIDENTIAL))
TWO_KEYS = check.Alphabet(keys=("k1", "k2"), tag=None, levels=(Level.PUBLIC, Level.CONFIDENTIAL))

# (check, policy) -> the shortest counterexample over SMALL: the observer's (or the writer's) label, the steps
# ("!" = the second world's only: an untrusted writer's).
SHORTEST = {
    ("integrity_noninterference", "caller-chooses-trust"): (
        "PUBLIC",
        ["!untrusted.memory_save(key='k1', content='apple', tags=(), trusted=True)", "observer.memory_get(key='k1')"],
    ),
    ("integrity_noninterference", "untrusted-shadows"): (
        "PUBLIC",
        [
            "observer.memory_save(key='k1', content='apple', tags=())",
            "!untrusted.memory_save(key='k1', content='apple', tags=())",
            "observer.memory_get(key='k1')",
        ],
    ),
    ("integrity_noninterference", "session-may-endorse"): (
        "PUBLIC",
        [
            "!untrusted.memory_save(key='k1', content='apple', tags=())",
            "!untrusted.endorse(key='k1')",
            "observer.memory_get(key='k1')",
        ],
    ),
    ("integrity_noninterference", "frozen-taint"): (
        "PUBLIC",
        [
            "!lowered.lower(source='web:page')",
            "!lowered.memory_save(key='k1', content='apple', tags=())",
            "observer.memory_get(key='k1')",
        ],
    ),
    ("integrity_noninterference", "existence-oracle"): (
        "PUBLIC",
        ["!untrusted.memory_save(key='k1', content='apple', tags=())", "observer.memory_get(key='k1')"],
    ),
    ("integrity_noninterference", "write-down-delete"): (
        "PUBLIC",
        [
            "observer.memory_save(key='k1', content='apple', tags=())",
            "!untrusted.memory_delete(key='k1')",
            "observer.memory_get(key='k1')",
        ],
    ),
    ("integrity_noninterference", "newest-over-all-labels"): (
        "PUBLIC",
        [
            "observer.memory_save(key='k1', content='apple', tags=())",
            "!untrusted.memory_save(key='k1', content='apple', tags=())",
            "observer.memory_get(key='k1')",
        ],
    ),
    ("laundering", "caller-chooses-trust"): (
        "PUBLIC@untrusted",
        ["untrusted.memory_save(key='k1', content='apple', tags=(), trusted=True)"],
    ),
    ("laundering", "reads-never-lower"): (
        "PUBLIC",
        ["untrusted.memory_save(key='k1', content='apple', tags=())", "trusted.copy(from='k1', to='k1')"],
    ),
    ("laundering", "session-may-endorse"): (
        "PUBLIC@untrusted",
        ["untrusted.memory_save(key='k1', content='apple', tags=())", "untrusted.endorse(key='k1')"],
    ),
    ("laundering", "frozen-taint"): (
        "PUBLIC@untrusted",
        ["untrusted.memory_save(key='k1', content='apple', tags=())", "trusted.copy(from='k1', to='k1')"],
    ),
}
SHARED_RANKING = (
    "PUBLIC",
    [
        "observer.memory_save(key='k1', content='apple', tags=())",
        "!untrusted.memory_save(key='k2', content='apple berry', tags=())",
        "observer.memory_search(query='apple', max_results=5)",
    ],
)

# Distinct traces of at most 3 steps over SMALL, after reductions and before.
DEPTH_3 = {"integrity_noninterference": (1110, 5787), "laundering": (2912, 3276)}

# Which integrity check the random search finds each variant's leak with (300 scenarios, seed 0).
CAUGHT_BY = {
    "caller-chooses-trust": {"integrity_noninterference", "laundering"},
    "untrusted-shadows": {"integrity_noninterference"},
    "shared-ranking": {"integrity_noninterference"},
    "reads-never-lower": {"laundering"},
    "session-may-endorse": {"integrity_noninterference", "laundering"},
}


def _described(found):
    return [("!" if step.high else "") + step.describe() for step in found.steps]


@pytest.mark.parametrize("seed", range(3))
def test_strict_passes_both_integrity_checks_at_random(seed):
    for name in INTEGRITY:
        result = CHECKS.get(name).run("strict", trials=300, seed=seed, levels=["PUBLIC", "INTERNAL"], max_ops=10)
        assert not result.leak, str(result)
        assert result.trials == 300 and result.operations > 300


@pytest.mark.parametrize("policy", sorted(CAUGHT_BY))
def test_every_integrity_variant_is_caught_at_random_with_a_short_replayable_counterexample(policy):
    results = check.run_all(policy, checks=INTEGRITY)
    assert {name for name, result in results.items() if result.leak} == CAUGHT_BY[policy]
    for result in results.values():
        if result.leak:
            assert 1 <= len(result) <= 4
            replayed = result.replay()
            assert (replayed.observed, replayed.expected, replayed.step) == (
                result.observed,
                result.expected,
                result.step,
            )


def test_a_random_counterexample_is_one_minimal():
    """Dropping any step of a shrunk counterexample leaves no leak, also the host's ``lower`` step: the steps after
    it are then a trusted writer's, in both worlds (``second_world`` marks them from the actors, not the input)."""
    for name, policy in (("integrity_noninterference", "frozen-taint"), ("laundering", "reads-never-lower")):
        found = CHECKS.get(name).run(policy, trials=300, seed=0, levels=["PUBLIC", "INTERNAL"], max_ops=8)
        assert found.leak
        for dropped in range(len(found.steps)):
            fewer = found.steps[:dropped] + found.steps[dropped + 1 :]
            assert check.Counterexample(**{**found.__dict__, "steps": fewer}).replay() is None


@pytest.mark.parametrize("name", INTEGRITY)
def test_strict_has_a_bounded_proof_to_depth_3(name):
    result = check.exhaustive("strict", check=name, depth=3, alphabet=SMALL, budget=None)
    assert not result.leak, str(result)
    assert (result.traces_after, result.traces_before) == DEPTH_3[name]
    assert result.traces == result.traces_after
    told = "no two worlds differing only in untrusted writers' calls were told apart by an observer whose floor"
    assert (told in str(result)) == (name == "integrity_noninterference")


@pytest.mark.parametrize("name,policy", sorted(SHORTEST))
def test_every_variant_has_its_shortest_counterexample(name, policy):
    result = check.exhaustive(policy, check=name, depth=3, alphabet=SMALL, budget=None)
    level, steps = SHORTEST[name, policy]
    assert result.leak, str(result)
    assert (str(result.counterexample.level), _described(result.counterexample)) == (level, steps)
    assert result.counterexample.replay() is not None
    if len(steps) > 1:
        assert not check.exhaustive(policy, check=name, depth=len(steps) - 1, alphabet=SMALL, budget=None).leak


def test_one_ranking_index_for_both_grades_has_its_shortest_counterexample():
    result = check.exhaustive("shared-ranking", check="integrity_noninterference", depth=3, alphabet=TWO_KEYS)
    assert result.leak, str(result)
    assert (str(result.counterexample.level), _described(result.counterexample)) == SHARED_RANKING
    scores = (
        [hit.score for hit in result.counterexample.observed],
        [hit.score for hit in result.counterexample.expected],
    )
    assert scores[0] != scores[1]  # the same hit, scored by statistics that count the untrusted version
    assert not check.exhaustive("shared-ranking", check="integrity_noninterference", depth=2, alphabet=TWO_KEYS).leak


@pytest.mark.parametrize("name", INTEGRITY)
def test_variants_the_check_does_not_catch_pass_it_to_depth_2(name):
    caught = {policy for check_name, policy in SHORTEST if check_name == name}
    for policy in sorted(set(names()) - caught - {"strict"}):
        if not CHECKS.get(name).inapplicable(resolve(policy)):
            assert not check.exhaustive(policy, check=name, depth=2, alphabet=SMALL, budget=None).leak, policy


def test_a_policy_without_floors_is_left_out_of_integrity_noninterference():
    assert not keeps_floors(resolve("global-stats")) and keeps_floors(resolve("strict"))
    with pytest.raises(InvalidArgument, match="cannot examine policy 'global-stats': its stores refuse a trusted"):
        check.exhaustive("global-stats", check="integrity_noninterference", depth=1)
    with pytest.raises(InvalidArgument, match="cannot examine policy 'shadow-after-match'"):
        check.integrity_noninterference("shadow-after-match", trials=1)
    assert "integrity_noninterference" not in check.run_all("global-stats", trials=2)
    results = check.exhaustive_all(["strict", "global-stats"], checks=INTEGRITY, depth=1, alphabet=SMALL)
    assert [(result.policy, result.check) for result in results] == [
        ("strict", "integrity_noninterference"),
        ("strict", "laundering"),
        ("global-stats", "laundering"),
    ]


def _raw_traces(symbols, depth):
    for length in range(1, depth + 1):
        yield from itertools.product(range(len(symbols)), repeat=length)


@pytest.mark.parametrize("name", INTEGRITY)
def test_every_trace_reduces_to_one_that_is_enumerated(name):
    for configuration in configurations(name, SMALL):
        symbols, rules = configuration.symbols, configuration.rules
        index = {symbol.step: number for number, symbol in enumerate(symbols)}
        kept = {
            tuple(index[step] for step in trace)
            for length in (1, 2)
            for trace in enumerate_traces(symbols, 3, rules, length)
        }
        assert sum(count_traces(symbols, 3, rules, 2)) == len(kept)
        reduced = {normalise(trace, symbols, 3, rules) for trace in _raw_traces(symbols, 2)}
        assert reduced - {None} == kept


def _verdicts_of_the_judge(policy, name, configuration, length):
    judge = CHECKS.get(name).judge
    for steps in enumerate_traces(configuration.symbols, 3, configuration.rules, length):
        yield steps, judge(policy, configuration.level, configuration.actors, steps) is not None


@pytest.mark.parametrize(
    "name,policy,writer",
    [
        ("integrity_noninterference", "frozen-taint", "lowered"),
        ("integrity_noninterference", "session-may-endorse", "untrusted"),
        ("laundering", "reads-never-lower", None),
    ],
)
def test_prefix_sharing_gives_every_trace_the_judges_verdict(name, policy, writer):
    """Every kept trace of at most 3 steps of the configurations at PUBLIC, in the judge's order and with its
    verdict replayed alone from empty stores. Guards: the walk treating a lowered session's later steps as both
    worlds' (``or step.actor in lowered`` dropped in ``prefixes._integrity_noninterference``)."""
    policy = resolve(policy)
    leaks = 0
    for configuration in configurations(name, SMALL):
        if any(actor.start.level is not Level.PUBLIC for actor in configuration.actors):
            continue
        if writer is not None and configuration.actors[1].name != writer:
            continue
        for length in (1, 2, 3):
            shared = list(verdicts(policy, name, configuration, 3, length))
            assert shared == list(_verdicts_of_the_judge(policy, name, configuration, length))
            leaks += sum(leaked for _, leaked in shared)
    assert leaks > 0


@pytest.mark.parametrize("name", INTEGRITY)
def test_every_trace_ends_with_the_stores_its_steps_make_from_empty_ones(name):
    """The working stores restored from a prefix's images hold, at a trace's end, the database its steps make when
    replayed alone (every row; salts and hashes masked): the sessions' lowered integrity included."""
    policy = resolve("strict")
    configuration = configurations(name, SMALL)[1]
    for steps, branch in itertools.islice(walk(policy, name, configuration, 3, 3), 0, None, 23):
        fresh = open_world(policy, configuration.actors, steps, with_high=True)
        try:
            for number, step in enumerate(steps):
                act(fresh.sessions[step.actor], step, number)
            fresh.store.storage.flush_sessions()
            world = branch.slots[-1].world
            assert _rows(world.store.storage.conn) == _rows(fresh.store.storage.conn), steps
        finally:
            fresh.store.close()


def _rows(connection):
    return [re.sub(r"X'[0-9A-F]+'|'[0-9a-f]{64}'", "?", line) for line in connection.iterdump()]


def test_second_world_marks_an_untrusted_writers_steps_from_the_actors():
    actors = (Actor("observer", "PUBLIC", floor="trusted"), Actor("lowered", "PUBLIC"))
    save = Step("lowered", "memory_save", (("key", "k1"), ("content", "apple"), ("tags", ())))
    lower = Step("lowered", "lower", (("source", "web:page"),), True)
    marked = second_world(actors, (save, lower, save))
    assert [step.high for step in marked] == [False, True, True]
    started = (Actor("observer", "PUBLIC", floor="trusted"), Actor("untrusted", "PUBLIC@untrusted"))
    assert [step.high for step in second_world(started, (Step("untrusted", "memory_delete", (("key", "k1"),)),))] == [
        True
    ]


def test_launders_judges_a_write_after_the_exposure():
    """A copy's read exposes its session before its save; a lower exposes it; a trusted write after either leaks."""
    store = check.scenarios.template(resolve("reads-never-lower")).fork()
    try:
        untrusted = store.session("PUBLIC", integrity="untrusted", session_id="u")
        trusted = store.session("PUBLIC", session_id="t")
        read = untrusted.memory_save("k1", "apple")
        copied = trusted.memory_save("k2", "apple")
        copy = Step("t", "copy", (("from", "k1"), ("to", "k2")))
        exposed, written = launders({}, copy, 1, copied, [read])
        assert written == copied.ref() and exposed == {"t": f"step 1 returned it {read.ref()}, untrusted"}
        assert launders({}, copy, 1, copied, []) == ({}, None)  # nothing untrusted shown: a trusted save is fine
        lowered, _ = launders({}, Step("t", "lower", (("source", "web"),), True), 0, Integrity.UNTRUSTED, [])
        assert launders(lowered, Step("t", "memory_save", ()), 1, copied, [])[1] == copied.ref()
    finally:
        store.close()


def test_cli_lists_and_runs_the_integrity_checks(capsys):
    assert (
        main(["check", "--policy", "strict", "--check", "integrity-noninterference,laundering", "--trials", "20"]) == 0
    )
    out = capsys.readouterr().out
    assert "integrity_noninterference: no leak under policy strict" in out and "laundering: no leak" in out
    argv = ["check", "--policy", "session-may-endorse", "--check", "laundering", "--exhaustive", "--depth", "2"]
    assert main(argv) == 1
    assert "untrusted.endorse(key='k1')" in capsys.readouterr().out
    assert main(["check", "--policy", "global-stats", "--check", "integrity-noninterference", "--trials", "2"]) == 2
    assert "cannot examine policy 'global-stats'" in capsys.readouterr().err
    # Every check on one policy: the one that cannot examine it is left out, said on stderr, and the budget's
    # estimate measures each check on a policy it can examine (global-stats' would refuse a trusted floor).
    assert main(["check", "--exhaustive", "--depth", "1", "--policy", "global-stats"]) == 0
    captured = capsys.readouterr()
    assert "left out (no trusted floor under the policy): integrity-noninterference under global-stats" in captured.err
    assert "laundering holds under policy global-stats" in captured.out


def test_the_integrity_actors_read_as_the_counterexamples_show_them():
    observer = Actor("observer", Label.parse("INTERNAL"), floor=Integrity.TRUSTED)
    steps = (Step("observer", "memory_get", (("key", "k1"),)),)
    found = check.Counterexample("c", resolve("strict"), None, (observer,), steps, 0, None, None, "")
    assert found.rows()[0]["session"] == "observer (INTERNAL floor trusted)"


LABELS = check.Alphabet.compartments(keys=("k1",), contents=("apple",), tag=None)


@pytest.mark.parametrize("policy", ["strict", "refuse-ambiguous"])
@pytest.mark.parametrize("name", INTEGRITY)
def test_the_integrity_checks_have_a_bounded_proof_over_labels(name, policy):
    """Over PUBLIC and the compartments hr, legal and both: a writer at every label that flows to the observer's,
    each also untrusted (``CONFIDENTIAL:hr@untrusted``)."""
    result = check.exhaustive(policy, check=name, depth=2, alphabet=LABELS, budget=None)
    assert not result.leak, str(result)
    assert (result.traces_after, result.configurations) == {
        "integrity_noninterference": (225, 18),
        "laundering": (
            1280,
            16,
        ),
    }[name]
    writers = {str(actor.start) for c in configurations(name, LABELS) for actor in c.actors}
    assert {"CONFIDENTIAL:hr@untrusted", "CONFIDENTIAL:hr,legal@untrusted", "CONFIDENTIAL:legal"} <= writers
