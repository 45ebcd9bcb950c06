"""``memlab serve`` driven by the MCP SDK's own stdio client, in real subprocesses on a real database file."""

import json
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest
from mcp import MCPError, types

from memlab import Level, MemoryStore, spine, tooldefs, tools
from memlab.mcp_server import escalate
from tests.conftest import fixed_clock
from tests.mcp_client import ROOT, call, connect, connect_all, default_command, parsed, run

STRIPPED = "stripped argument 'classification': the classification is always the session's taint"


def test_the_five_tools_errors_and_the_host_escalation_over_stdio(tmp_path):
    db, log = tmp_path / "memories", tmp_path / "server.log"

    async def scenario():
        async with connect(db, "INTERNAL", log=log) as client:
            assert client.instructions == spine()
            listed = (await client.list_tools()).tools
            assert [tool.name for tool in listed] == list(tools.TOOL_NAMES)
            assert [tool.input_schema for tool in listed] == [schema["parameters"] for schema in tools.SCHEMAS]
            assert [tool.description for tool in listed] == [schema["description"] for schema in tools.SCHEMAS]
            # Each with a title and the outputSchema the SDK's client validates every successful result against.
            assert [(tool.title, tool.output_schema) for tool in listed] == [
                (tooldefs.get(tool.name).title, tooldefs.get(tool.name).output_schema()) for tool in listed
            ]
            assert [tool.annotations.read_only_hint for tool in listed] == [False, True, True, True, False]
            assert listed[4].annotations.destructive_hint is True

            # The model asks for PUBLIC; the save happens at the session's taint and the attempt is audited.
            arguments = {"key": "user-name", "content": "Sam Rivera", "tags": ["personal"], "classification": "PUBLIC"}
            error, saved, text = await call(client, "memory_save", arguments)
            assert not error and parsed(text) == saved
            assert saved == {
                "saved": True,
                "key": "user-name",
                "classification": "INTERNAL",
                "integrity": "trusted",
                "version": 1,
            }
            error, got, _ = await call(client, "memory_get", {"key": "user-name"})
            assert not error and (got["found"], got["content"], got["classification"]) == (
                True,
                "Sam Rivera",
                "INTERNAL",
            )
            error, found, _ = await call(client, "memory_search", {"query": "what is my name?"})
            assert not error and [hit["key"] for hit in found["results"]] == ["user-name"]
            assert found["results"][0]["snippet"] == "Sam Rivera" and found["results"][0]["score"] > 0
            error, listed_memories, _ = await call(client, "memory_list", {"tag": "personal"})
            assert not error and [memory["key"] for memory in listed_memories["memories"]] == ["user-name"]
            error, deleted, _ = await call(client, "memory_delete", {"key": "user-name"})
            assert not error and deleted == {
                "deleted": True,
                "key": "user-name",
                "classification": "INTERNAL",
                "integrity": "trusted",
            }
            assert (await call(client, "memory_get", {"key": "user-name"}))[1] == {"found": False, "key": "user-name"}

            # Error results are MCP tool errors with the code and memlab's message.
            error, result, text = await call(client, "memory_delete", {"key": "user-name"})
            assert error and text == "not_found: no memory with key 'user-name' at this session's level"
            assert result == {"error": {"code": "not_found", "message": text.removeprefix("not_found: ")}}
            error, _, text = await call(client, "memory_save", {"key": "user-city"})
            assert error and text == "invalid_argument: memory_save needs 'content'"
            error, _, text = await call(client, "memory_forget", {"key": "user-name"})
            assert error and text.startswith("invalid_argument: unknown tool 'memory_forget'")

            # The model's only channel is tools/call: it cannot reach the host's escalation, nor pick a level.
            error, _, text = await call(client, "memlab/escalate", {"level": "RESTRICTED"})
            assert error and text.startswith("invalid_argument: unknown tool")
            # The host raises the taint; it can never be lowered, and saves follow the live taint.
            assert await escalate(client, Level.CONFIDENTIAL, reason="user opened payroll.xlsx") == Level.CONFIDENTIAL
            with pytest.raises(MCPError, match="cannot lower the taint") as refused:
                await escalate(client, "public")
            assert refused.value.code == types.INVALID_PARAMS
            with pytest.raises(MCPError, match="unknown level"):
                await escalate(client, "top-secret")
            error, saved, _ = await call(client, "memory_save", {"key": "salary", "content": "90k", "taint": "PUBLIC"})
            assert not error and saved["classification"] == "CONFIDENTIAL"

    run(scenario, log)
    with MemoryStore(db) as store:
        audit = store.audit()
        assert audit["tool"].tolist() == [
            "memory_save",
            "memory_get",
            "memory_search",
            "memory_list",
            "memory_delete",
            "memory_get",
            "memory_delete",
            "memory_save",
            "memory_forget",
            "memlab/escalate",
            "memory_save",
        ]
        assert audit["outcome"].tolist() == ["ok"] * 5 + ["not_found"] * 2 + ["invalid_argument"] * 3 + ["ok"]
        assert audit["taint"].tolist() == ["INTERNAL"] * 10 + ["CONFIDENTIAL"]
        assert audit["notes"].iloc[0] == [STRIPPED]
        assert audit["notes"].iloc[-1] == [STRIPPED.replace("'classification'", "'taint'")]
        assert audit["records"].iloc[-1] == ["salary@CONFIDENTIAL/v1"]
        events = store.taint_events()
        assert events[["from_level", "to_level", "reason"]].values.tolist() == [
            ["INTERNAL", "CONFIDENTIAL", "user opened payroll.xlsx"]
        ]
        assert store.sessions()[["agent", "initial_taint"]].values.tolist() == [["main", "INTERNAL"]]


def readme_server_command(db: Path, taint: str, agent: str) -> list[str]:
    """The server command of the README's MCP client configuration, pointed at ``db``, ``taint`` and ``agent``."""
    section = (ROOT / "README.md").read_text().split("## Use it from an agent\n", 1)[1].split("\n## ", 1)[0]
    config = json.loads(re.search(r"```json\n(.+?)\n```", section, re.DOTALL).group(1))
    server = config["mcpServers"]["memlab"]
    args = list(server["args"])
    args[args.index("--db") + 1] = str(db)
    args[args.index("--taint") + 1] = taint
    args[args.index("--agent") + 1] = agent
    script = Path(sys.executable).with_name(server["command"])
    return [
        str(script) if script.exists() else sys.executable,
        *([] if script.exists() else ["-m", "memlab.cli"]),
        *args,
    ]


def test_a_public_server_cannot_see_what_a_confidential_server_saved_on_the_same_file(tmp_path):
    db, log = tmp_path / "memories", tmp_path / "server.log"
    with MemoryStore(db) as store:
        store.session(Level.PUBLIC).memory_save("user-name", "Sam", tags=["personal"])
    # Two live servers on one file: one CONFIDENTIAL, one PUBLIC started from the README's configuration.
    servers = [default_command(db, "CONFIDENTIAL"), readme_server_command(db, "PUBLIC", "main")]

    async def scenario():
        async with connect_all(servers, log=log) as (secret, public):
            assert not (
                await call(secret, "memory_save", {"key": "salary", "content": "Sam earns 90k", "tags": ["hr"]})
            )[0]
            legal = {"key": "user-name", "content": "Samantha Rivera", "tags": ["personal"]}
            assert (await call(secret, "memory_save", legal))[1]["classification"] == "CONFIDENTIAL"
            assert (await call(secret, "memory_get", {"key": "user-name"}))[1]["content"] == "Samantha Rivera"

            hidden = await call(public, "memory_get", {"key": "salary"})
            missing = await call(public, "memory_get", {"key": "bonus"})
            assert hidden[1] == {"found": False, "key": "salary"} and missing[1] == {"found": False, "key": "bonus"}
            got = (await call(public, "memory_get", {"key": "user-name"}))[1]
            assert (got["content"], got["classification"]) == ("Sam", "PUBLIC")
            found = (await call(public, "memory_search", {"query": "how much does Sam earn? salary"}))[1]
            assert [(hit["key"], hit["content"]) for hit in found["results"]] == [("user-name", "Sam")]
            listed = (await call(public, "memory_list", {}))[1]["memories"]
            assert [(memory["key"], memory["content"]) for memory in listed] == [("user-name", "Sam")]
            assert (await call(public, "memory_list", {"tag": "hr"}))[1] == {"memories": []}
            error, _, text = await call(public, "memory_delete", {"key": "salary"})
            assert error and text == "not_found: no memory with key 'salary' at this session's level"

    run(scenario, log)
    with MemoryStore(db) as store:
        assert sorted(store.sessions()["initial_taint"]) == ["CONFIDENTIAL", "PUBLIC", "PUBLIC"]
        assert store.session(Level.CONFIDENTIAL).memory_get("salary").content == "Sam earns 90k"


def test_serve_refuses_a_bad_level_before_touching_the_database(tmp_path, capsys):
    from memlab.cli import main

    assert main(["serve", "--db", str(tmp_path / "m.db"), "--taint", "secret"]) == 2
    assert "unknown level 'secret'" in capsys.readouterr().err
    assert not (tmp_path / "m.db").exists()


def test_a_server_started_with_a_ranking_file_orders_by_it_and_sees_nothing_more(tmp_path):
    """``memlab serve --ranking FILE``: the same query on the same store comes back in the file's order; at each
    taint the hits are the same memories with or without the file (it orders, it never widens the view)."""
    from memlab import Ranking

    db, log = tmp_path / "memories", tmp_path / "server.log"
    with MemoryStore(db) as store:
        public = store.session(Level.PUBLIC)
        public.memory_save("words", "jazz records and jazz concerts with jazz friends")
        public.memory_save("tagged", "records and concerts", tags=["jazz"])
        store.session(Level.CONFIDENTIAL).memory_save("secret", "the jazz club pays 90k", tags=["jazz"])
    boosted = Ranking(tag_boost=1000.0).save(tmp_path / "boosted.json")
    unboosted = Ranking(tag_boost=0.0, tags=0.0).save(tmp_path / "unboosted.json")
    servers = [
        [*default_command(db, taint), *(["--ranking", str(path)] if path else [])]
        for taint in ("PUBLIC", "CONFIDENTIAL")
        for path in (None, boosted, unboosted)
    ]

    async def scenario():
        async with connect_all(servers, log=log) as clients:
            found = []
            for client in clients:
                error, result, _ = await call(client, "memory_search", {"query": "jazz", "max_results": 100})
                assert not error
                found.append([hit["key"] for hit in result["results"]])
            return found

    public_plain, public_boosted, public_unboosted, secret_plain, secret_boosted, secret_unboosted = run(scenario, log)
    assert public_boosted == ["tagged", "words"] and public_unboosted == ["words", "tagged"]
    assert secret_boosted[-1] == "words" and secret_unboosted[-1] != "words"
    for plain, *ordered in (
        (public_plain, public_boosted, public_unboosted),
        (secret_plain, secret_boosted, secret_unboosted),
    ):
        assert all(sorted(keys) == sorted(plain) for keys in ordered)
    assert sorted(public_plain) == ["tagged", "words"] and sorted(secret_plain) == ["secret", "tagged", "words"]


# -- the spine as a prompt, the recall as a resource ---------------------------------------------------------

RECALL_COLUMNS = ["agent", "taint", "tool", "key", "query", "outcome", "records", "notes", "message"]
"""What an audit row says of a call; ``seq``, ``at`` and ``session_id`` differ between any two calls."""


def audit_rows(store: MemoryStore, start: int = 0) -> list[list[object]]:
    """The audit from row ``start`` on, as lists of ``RECALL_COLUMNS`` (a missing value as None, not NaN)."""
    audit = store.audit()[RECALL_COLUMNS].iloc[start:].astype(object)
    return audit.where(audit.notna(), None).values.tolist()


def remembered(db: Path) -> int:
    """A store on ``db`` (fixed clock, so every line of a recall is the same in every run) holding, for agent
    ``main``, three PUBLIC memories, an INTERNAL one shadowing one of them and a CONFIDENTIAL one; the number of
    audit rows that wrote."""
    with MemoryStore(db, clock=fixed_clock) as store:
        public = store.session(Level.PUBLIC)
        public.memory_save("user-name", "Sam", tags=["personal"])
        public.memory_save("user-city", "Lisbon", tags=["personal"])
        public.memory_save("user-diet", "Vegetarian, and runs on Sundays", tags=["food"])
        store.session(Level.INTERNAL).memory_save("user-name", "Samantha Rivera", tags=["personal"])
        store.session(Level.CONFIDENTIAL).memory_save("salary", "Sam earns 90k", tags=["hr"])
        return len(store.audit())


def recalled(db: Path, taint: Level, budget: int, agent: str = "main") -> tuple[str, list[object]]:
    """``Session.recall`` in this process, and the audit row it wrote (the reference a resource read must match)."""
    with MemoryStore(db) as store:
        text = store.session(taint, agent).recall(budget_chars=budget)
        return text, audit_rows(store)[-1]


def text_of(result: types.ReadResourceResult) -> str:
    (content,) = result.contents
    assert content.mime_type == "text/markdown"
    return content.text


def test_the_spine_is_a_prompt_and_the_recall_a_resource_each_read_one_audited_memory_recall(tmp_path):
    db, log = tmp_path / "memories", tmp_path / "server.log"
    prepared = remembered(db)

    async def scenario():
        async with connect(db, "INTERNAL", log=log) as client:
            (prompt,) = (await client.list_prompts()).prompts
            assert (prompt.name, [(a.name, a.required) for a in prompt.arguments]) == (
                "memory-spine",
                [("budget_chars", False)],
            )
            spine_only = await client.get_prompt("memory-spine")
            # A host's form sends every declared argument, an unfilled one empty: that is the plain prompt.
            assert (await client.get_prompt("memory-spine", {"budget_chars": ""})).messages == spine_only.messages
            with_recall = await client.get_prompt("memory-spine", {"budget_chars": "4000"})

            (resource,) = (await client.list_resources()).resources
            assert (resource.uri, resource.mime_type) == ("memory://recall", "text/markdown")
            (template,) = (await client.list_resource_templates()).resource_templates
            assert template.uri_template == "memory://recall{?budget_chars}"
            full = await client.read_resource("memory://recall")
            assert full.contents[0].uri == "memory://recall"
            short = text_of(await client.read_resource("memory://recall?budget_chars=260"))
            await escalate(client, Level.CONFIDENTIAL, reason="user opened payroll.xlsx")
            escalated = text_of(await client.read_resource("memory://recall"))
            return spine_only, with_recall, text_of(full), short, escalated

    spine_only, with_recall, full, short, escalated = run(scenario, log)
    with MemoryStore(db) as store:
        served = audit_rows(store, prepared)
    # The plain prompt reads nothing; the prompt with a budget and each resource read is one memory_recall call,
    # the very row Session.recall writes for a Python host at the same taint and budget.
    (message,) = spine_only.messages
    assert (message.role, message.content.text) == ("user", spine())
    internal, internal_row = recalled(db, Level.INTERNAL, 4000)
    assert "Samantha Rivera" in internal and "90k" not in internal
    (message,) = with_recall.messages
    assert message.content.text == spine() + "\n\n" + internal
    assert full == internal
    expected_short, short_row = recalled(db, Level.INTERNAL, 260)
    assert short == expected_short and "2 older memories left out" in short
    expected_escalated, escalated_row = recalled(db, Level.CONFIDENTIAL, 4000)
    assert escalated == expected_escalated and "Sam earns 90k" in escalated
    assert served == [internal_row, internal_row, short_row, escalated_row]
    assert internal_row[:3] + internal_row[5:7] == [
        "main",
        "INTERNAL",
        "memory_recall",
        "ok",
        ["user-name@INTERNAL/v1", "user-diet@PUBLIC/v1", "user-city@PUBLIC/v1"],
    ]


BAD_URIS = {
    # Whose memories and at which level are the server's to say, never the URI's.
    "memory://recall?agent=bob": "memory://recall takes no parameter 'agent'; it takes budget_chars",
    "memory://recall?taint=RESTRICTED": "memory://recall takes no parameter 'taint'; it takes budget_chars",
    "memory://recall?budget_chars=100&taint=CONFIDENTIAL&agent=bob&level=3&x=": (
        "memory://recall takes no parameter 'agent', 'level', 'taint' and 1 more; it takes budget_chars"
    ),
    "memory://recall?%61gent=bob": "memory://recall takes no parameter 'agent'; it takes budget_chars",
    "memory://recall?budget_chars=100&budget_chars=4000": (
        "budget_chars is given 2 times in 'memory://recall?budget_chars=100&budget_chars=4000'; give it once"
    ),
    "memory://recall?budget_chars=0": "budget_chars must be a positive integer, not '0'",
    "memory://recall?budget_chars=-5": "budget_chars must be a positive integer, not '-5'",
    "memory://recall?budget_chars=2.5": "budget_chars must be a positive integer, not '2.5'",
    "memory://recall?budget_chars=": "budget_chars must be a positive integer, not ''",
    "memory://recall?budget_chars=%D9%A3": "budget_chars must be a positive integer, not '٣'",
    "memory://recall/bob": "unknown resource 'memory://recall/bob'; the resource is memory://recall "
    "(memory://recall{?budget_chars})",
    "memory://bob/recall": "unknown resource 'memory://bob/recall'; the resource is memory://recall "
    "(memory://recall{?budget_chars})",
    "memory://RECALL": "unknown resource 'memory://RECALL'; the resource is memory://recall "
    "(memory://recall{?budget_chars})",
    "file:///etc/passwd": "unknown resource 'file:///etc/passwd'; the resource is memory://recall "
    "(memory://recall{?budget_chars})",
}
BAD_PROMPTS = {
    ("memory-spine", (("budget_chars", "4k"),)): "budget_chars must be a positive integer, not '4k'",
    ("memory-spine", (("budget_chars", "0"),)): "budget_chars must be a positive integer, not '0'",
    ("memory-spine", (("taint", "RESTRICTED"),)): "memory-spine takes no argument 'taint'; it takes budget_chars",
    ("memory-spine", (("agent", "bob"), ("budget_chars", "100"))): (
        "memory-spine takes no argument 'agent'; it takes budget_chars"
    ),
    ("memory-recall", ()): "unknown prompt 'memory-recall'; the prompt is memory-spine",
}


def test_a_uri_or_prompt_argument_the_server_does_not_serve_is_refused_naming_it_and_reads_nothing(tmp_path):
    # Guards: recall_budget without its `_refuse_unknown` (a ?agent= or ?taint= silently ignored), and
    # get_prompt without its own (an unknown argument dropped).
    db, log = tmp_path / "memories", tmp_path / "server.log"
    prepared = remembered(db)

    async def scenario():
        async with connect(db, "PUBLIC", log=log) as client:
            refusals = {}
            for uri in BAD_URIS:
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                refusals[uri] = (refused.value.code, refused.value.message)
            for name, arguments in BAD_PROMPTS:
                with pytest.raises(MCPError) as refused:
                    await client.get_prompt(name, dict(arguments))
                refusals[name, arguments] = (refused.value.code, refused.value.message)
            # MCP's prompt arguments are strings: a number is refused by the SDK before memlab sees it.
            number = types.GetPromptRequestParams.model_construct(name="memory-spine", arguments={"budget_chars": 5})
            with pytest.raises(MCPError) as refused, pytest.warns(UserWarning, match="Expected `str`"):
                await client.send_request(types.GetPromptRequest(params=number), types.GetPromptResult)
            return refusals, (refused.value.code, refused.value.message)

    refusals, number = run(scenario, log)
    assert refusals == {case: (types.INVALID_PARAMS, message) for case, message in (BAD_URIS | BAD_PROMPTS).items()}
    assert number == (types.INVALID_PARAMS, "Invalid request parameters")
    with MemoryStore(db) as store:
        assert audit_rows(store, prepared) == []  # no call was made: nothing read, nothing written


def test_a_public_servers_recall_never_shows_a_confidential_or_another_agents_memory_whatever_it_asks(tmp_path):
    # Guards: _recall reading through `session.store.session("CONFIDENTIAL", session.agent)` instead of the session.
    db, log = tmp_path / "memories", tmp_path / "server.log"
    prepared = remembered(db)
    servers = [default_command(db, "CONFIDENTIAL"), default_command(db, "PUBLIC", "bob"), default_command(db, "PUBLIC")]

    async def scenario():
        async with connect_all(servers, log=log) as (secret, bob, public):
            saved = [
                await call(secret, "memory_save", {"key": "user-city", "content": "Sam moved to Porto for HR"}),
                await call(secret, "memory_save", {"key": "bonus", "content": "Sam's bonus is 12k", "tags": ["hr"]}),
                await call(bob, "memory_save", {"key": "user-city", "content": "Bob lives in Oslo", "tags": ["home"]}),
            ]
            assert not any(error for error, _, _ in saved)
            seen = {}
            for uri in ("memory://recall", "memory://recall?budget_chars=260", "memory://recall?budget_chars=100000"):
                seen[uri] = text_of(await public.read_resource(uri))
            prompt = await public.get_prompt("memory-spine", {"budget_chars": "100000"})
            seen["prompt"] = prompt.messages[0].content.text.removeprefix(spine() + "\n\n")
            for uri in (
                "memory://recall?agent=bob",
                "memory://recall?taint=CONFIDENTIAL",
                "memory://recall?budget_chars=100000&agent=bob&taint=RESTRICTED",
                "memory://recall?budget_chars=100000;agent=bob",
                "memory://bob/recall",
                "memory://recall#bob",
            ):
                with pytest.raises(MCPError, match="takes no parameter|must be a positive integer|unknown resource"):
                    await public.read_resource(uri)
            for arguments in ({"agent": "bob"}, {"taint": "CONFIDENTIAL", "budget_chars": "100000"}):
                with pytest.raises(MCPError, match="takes no argument"):
                    await public.get_prompt("memory-spine", arguments)
            return (
                seen,
                text_of(await secret.read_resource("memory://recall")),
                text_of(await bob.read_resource("memory://recall")),
            )

    seen, secret_recall, bob_recall = run(scenario, log)
    with MemoryStore(db) as store:
        rows = audit_rows(store, prepared)
    assert "Sam's bonus is 12k" in secret_recall and "Porto" in secret_recall  # the secrets exist, one level up
    assert "- user-city: Bob lives in Oslo (" in bob_recall and "Sam" not in bob_recall  # and bob sees only his
    public_view = recalled(db, Level.PUBLIC, 4000)[0]
    assert seen["memory://recall"] == seen["memory://recall?budget_chars=100000"] == seen["prompt"] == public_view
    assert seen["memory://recall?budget_chars=260"] == recalled(db, Level.PUBLIC, 260)[0]
    for text in seen.values():
        assert not any(secret in text for secret in ("Samantha", "90k", "12k", "Porto", "Oslo", "Bob"))
    recalls = [(agent, taint, outcome) for agent, taint, tool, *_, outcome, _, _, _ in rows if tool == "memory_recall"]
    # The four reads that were served, and the two the other servers made; the refusals left no row.
    assert sorted(recalls) == [("bob", "PUBLIC", "ok"), ("main", "CONFIDENTIAL", "ok")] + [("main", "PUBLIC", "ok")] * 4


# Each step: (actor, agent, the actor's taint, tool, arguments); "escalate" raises the actor's taint.
STEPS = [
    ("low", "main", Level.PUBLIC, "memory_save", {"key": "user-name", "content": "Sam", "tags": ["personal"]}),
    ("high", "main", Level.CONFIDENTIAL, "memory_save", {"key": "user-name", "content": "Samantha", "tags": ["hr"]}),
    ("bob", "bob", Level.PUBLIC, "memory_save", {"key": "user-name", "content": "Bob", "tags": ["personal"]}),
    ("twin", "Main", Level.PUBLIC, "memory_save", {"key": "plan", "content": "a twin agent's plan"}),
    ("low", "main", Level.PUBLIC, "memory_save", {"key": "notes", "content": "coffee at work", "tags": ["work"]}),
    ("mid", "main", Level.INTERNAL, "memory_save", {"key": "plan", "content": "python deadline in march"}),
    ("top", "main", Level.RESTRICTED, "memory_save", {"key": "salary", "content": "90k", "tags": ["work"]}),
    ("climber", "main", Level.PUBLIC, "memory_save", {"key": "deadline", "content": "May 2024"}),
    ("climber", "main", Level.PUBLIC, "escalate", Level.CONFIDENTIAL),
    ("climber", "main", Level.CONFIDENTIAL, "memory_save", {"key": "deadline", "content": "the board meets in May"}),
    ("high", "main", Level.CONFIDENTIAL, "memory_save", {"key": "notes", "content": "hr notes", "tags": ["hr"]}),
    ("mid", "main", Level.INTERNAL, "memory_delete", {"key": "plan"}),
    ("high", "main", Level.CONFIDENTIAL, "memory_delete", {"key": "notes"}),
    ("low", "main", Level.PUBLIC, "memory_save", {"key": "user-city", "content": "Lisbon", "tags": ["personal"]}),
    ("bob", "bob", Level.PUBLIC, "memory_delete", {"key": "user-name"}),
]


def stepped(db: Path, bound: Level | None) -> None:
    """``STEPS`` on a new store at ``db`` (fixed clock): only agent ``main``'s at taints <= ``bound``, or all."""
    with MemoryStore(db, clock=fixed_clock) as store:
        sessions = {}
        for actor, agent, taint, tool, arguments in STEPS:
            if bound is not None and (agent != "main" or taint > bound):
                continue  # above the bound: from its escalation past it on, the climber too
            if actor not in sessions:
                sessions[actor] = store.session(taint, agent, session_id=actor)
            session = sessions[actor]
            session.escalate(arguments) if tool == "escalate" else session.call(tool, arguments)


def test_the_recall_resource_at_a_taint_depends_only_on_operations_at_or_below_it(tmp_path):
    """Noninterference through MCP's prompt and resource: a store holding only the steps at <= T, and one holding
    every step (above T, of other agents, a climber's after its escalation) give a server at T the same reads."""
    # Guards: _recall reading through `session.store.session(Level.RESTRICTED, session.agent)`.
    log = tmp_path / "server.log"
    dbs = {
        bound: tmp_path / (bound.name if bound is not None else "all") for bound in (Level.PUBLIC, Level.INTERNAL, None)
    }
    for bound, db in dbs.items():
        stepped(db, bound)
    servers = {
        ("PUBLIC", Level.PUBLIC): default_command(dbs[Level.PUBLIC], "PUBLIC"),
        ("PUBLIC", None): default_command(dbs[None], "PUBLIC"),
        ("INTERNAL", Level.INTERNAL): default_command(dbs[Level.INTERNAL], "INTERNAL"),
        ("INTERNAL", None): default_command(dbs[None], "INTERNAL"),
        ("CONFIDENTIAL", None): default_command(dbs[None], "CONFIDENTIAL"),
    }
    uris = ["memory://recall", "memory://recall?budget_chars=250", "memory://recall?budget_chars=100000"]

    async def scenario():
        async with connect_all(list(servers.values()), log=log) as clients:
            reads = {}
            for server, client in zip(servers, clients, strict=True):
                texts = [text_of(await client.read_resource(uri)) for uri in uris]
                prompt = await client.get_prompt("memory-spine", {"budget_chars": "250"})
                reads[server] = [*texts, prompt.messages[0].content.text]
            return reads

    reads = run(scenario, log)
    assert reads["PUBLIC", Level.PUBLIC] == reads["PUBLIC", None]
    assert reads["INTERNAL", Level.INTERNAL] == reads["INTERNAL", None]
    assert "- user-name: Sam (" in reads["PUBLIC", None][0] and "coffee at work" in reads["INTERNAL", None][0]
    # The steps above INTERNAL are there to be seen one level up: the reads above are equal for a reason.
    assert "the board meets in May" in reads["CONFIDENTIAL", None][0] and "Samantha" in reads["CONFIDENTIAL", None][0]


def test_the_stores_hooks_gate_a_resource_read_as_they_gate_session_recall():
    """A hook refusing ``memory_recall`` refuses the resource and the prompt's recall too (an MCP error carrying
    memlab's code), audited in the same row as a refused ``Session.recall``; the spine alone still reads."""
    # Guards: _recall as a second copy, `render(session.memory_list(), budget)[0]` (no hook asked about a recall).
    from mcp import Client

    from memlab import Denied
    from memlab.mcp_server import build

    def no_recall(call):
        if call.tool == "memory_recall" and call.arguments.get("budget_chars", 0) > 1000:
            raise Denied("recall over 1000 characters is off for this user")
        return call

    with MemoryStore(clock=fixed_clock) as store:
        store.hooks.append(no_recall)
        session = store.session(Level.INTERNAL)
        session.memory_save("user-name", "Sam", tags=["personal"])

        async def scenario():
            async with Client(build(session)) as client:
                refusals = []
                for read in (
                    client.read_resource("memory://recall"),
                    client.get_prompt("memory-spine", {"budget_chars": "4000"}),
                ):
                    with pytest.raises(MCPError) as refused:
                        await read
                    refusals.append((refused.value.code, refused.value.message))
                allowed = text_of(await client.read_resource("memory://recall?budget_chars=1000"))
                return refusals, allowed, (await client.get_prompt("memory-spine")).messages[0].content.text

        refusals, allowed, spine_only = anyio.run(scenario)
        message = "denied: recall over 1000 characters is off for this user"
        assert refusals == [(types.INVALID_PARAMS, message)] * 2
        assert allowed == session.recall(budget_chars=1000) and spine_only == spine()
        with pytest.raises(Denied, match=message.removeprefix("denied: ")):
            session.recall(budget_chars=4000)
        rows = audit_rows(store, 1)
    denied, ok = rows[-1], rows[2]  # the refused and the allowed read, over MCP and from Python: the same rows
    assert rows == [denied, denied, ok, ok, denied] and (denied[5], ok[5]) == ("denied", "ok")


def test_a_server_configured_by_the_docs_env_block_serves_that_store_agent_and_taint(tmp_path):
    """docs/agents-and-mcp.md's `env` configuration, as a host runs it: no flags, MEMLAB_DB, MEMLAB_AGENT and
    MEMLAB_TAINT in the server's environment (and none of the test run's own MEMLAB_* settings).

    Guards: serve reading its agent from another variable (the memory lands in `main`)."""
    import os

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    page = (ROOT / "docs" / "agents-and-mcp.md").read_text()
    (block,) = [found for found in re.findall(r"```json\n(.+?)\n```", page, re.DOTALL) if '"env"' in found]
    server = json.loads(block)["mcpServers"]["memlab"]
    assert server["args"] == ["serve"]
    db, log = tmp_path / "memories", tmp_path / "server.log"
    env = {**server["env"], "MEMLAB_DB": str(db)}
    if "PYTHONPATH" in os.environ:  # a test run from another checkout serves that checkout's memlab
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    params = StdioServerParameters(command=sys.executable, args=["-m", "memlab.cli", *server["args"]], env=env)

    async def scenario():
        with log.open("a") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                return await call(client, "memory_save", {"key": "team", "content": "Sam leads the platform team"})

    failed, saved, _ = run(scenario, log)
    assert not failed and saved["classification"] == server["env"]["MEMLAB_TAINT"]
    with MemoryStore(db) as store:
        (row,) = store.sessions()[["agent", "initial_taint"]].values.tolist()
        assert row == [server["env"]["MEMLAB_AGENT"], server["env"]["MEMLAB_TAINT"]]


def test_servers_at_two_compartments_on_one_file_see_only_their_own_and_a_server_at_both_sees_each(tmp_path):
    """Three live servers on one file, as a host runs them for two teams and their common lead: one at
    ``CONFIDENTIAL:hr`` configured only by ``MEMLAB_TAINT`` (no ``--taint``), one at ``--taint CONFIDENTIAL:legal``,
    one at both. What hr saves is classified at its label; legal's get, search, list, delete and recall answer as
    for a key that does not exist; the server at both reads each team's.

    Guards: serve taking its taint from the flag only (the hr server then starts at PUBLIC and saves there), and
    ``ViewRules.can_read_label`` reading the levels only (legal then reads hr's salary): both seen failing."""
    db, log = tmp_path / "memories", tmp_path / "server.log"
    hr_server = ["env", "MEMLAB_TAINT=CONFIDENTIAL:hr", sys.executable, "-m", "memlab.cli", "serve", "--db", str(db)]
    servers = [hr_server, default_command(db, "CONFIDENTIAL:legal"), default_command(db, "CONFIDENTIAL:hr,legal")]

    async def scenario():
        async with connect_all(servers, log=log) as (hr, legal, both):
            saved = (await call(hr, "memory_save", {"key": "salary", "content": "Sam earns 90k", "tags": ["pay"]}))[1]
            assert saved["classification"] == "CONFIDENTIAL:hr"
            await call(legal, "memory_save", {"key": "case", "content": "Sam's contract dispute", "tags": ["pay"]})
            assert (await call(legal, "memory_get", {"key": "salary"}))[1] == {"found": False, "key": "salary"}
            assert (await call(legal, "memory_get", {"key": "bonus"}))[1] == {"found": False, "key": "bonus"}
            found = (await call(legal, "memory_search", {"query": "how much does Sam earn? salary"}))[1]
            assert [hit["key"] for hit in found["results"]] == ["case"]
            listed = (await call(legal, "memory_list", {"tag": "pay"}))[1]["memories"]
            assert [memory["key"] for memory in listed] == ["case"]
            error, _, text = await call(legal, "memory_delete", {"key": "salary"})
            assert error and text == "not_found: no memory with key 'salary' at this session's level"
            recall = text_of(await legal.read_resource("memory://recall"))
            assert "90k" not in recall and "contract dispute" in recall
            found = (await call(both, "memory_search", {"query": "Sam salary contract"}))[1]
            assert sorted((hit["key"], hit["classification"]) for hit in found["results"]) == [
                ("case", "CONFIDENTIAL:legal"),
                ("salary", "CONFIDENTIAL:hr"),
            ]

    run(scenario, log)
    with MemoryStore(db) as store:
        assert sorted(store.sessions()["initial_taint"]) == [
            "CONFIDENTIAL:hr",
            "CONFIDENTIAL:hr,legal",
            "CONFIDENTIAL:legal",
        ]
        assert store.session(taint="CONFIDENTIAL:hr").memory_get("salary").content == "Sam earns 90k"
        assert store.verify().ok


def exchange(process: subprocess.Popen, lines: queue.Queue, message: dict) -> dict:
    """Send one JSON-RPC message to a raw ``memlab serve`` and read its one reply (stdout carries only replies)."""
    process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    return json.loads(lines.get(timeout=60))


def test_a_request_before_initialize_is_refused_naming_what_comes_first_and_nothing_runs(tmp_path):
    # Guards: build() without its refuse_before_initialize middleware (the SDK's -32602 "Invalid request parameters"
    # with empty data, which reads as a fault in the params).
    db = tmp_path / "memories"
    command = [sys.executable, "-m", "memlab.cli", "serve", "--db", str(db), "--taint", "INTERNAL"]
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    try:
        save = {"name": "memory_save", "arguments": {"key": "k", "content": "v"}}
        for number, (method, params) in enumerate([("tools/list", {}), ("tools/call", save)], start=1):
            reply = exchange(process, lines, {"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            assert reply["error"] == {
                "code": types.INVALID_REQUEST,
                "message": f"'{method}' came before 'initialize': an MCP client sends 'initialize' first and waits "
                "for its answer (only 'ping' may come earlier)",
                "data": {"method": method, "expected": "initialize"},
            }
        assert exchange(process, lines, {"jsonrpc": "2.0", "id": 3, "method": "ping"})["result"] == {}
        unknown = exchange(process, lines, {"jsonrpc": "2.0", "id": 4, "method": "memlab/nothing"})
        assert unknown["error"]["code"] == types.METHOD_NOT_FOUND
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert exchange(process, lines, {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": hello})["result"]
        listed = exchange(process, lines, {"jsonrpc": "2.0", "id": 6, "method": "tools/list"})
        assert [tool["name"] for tool in listed["result"]["tools"]] == list(tools.TOOL_NAMES)
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    with MemoryStore(db) as store:
        assert store.audit()["tool"].tolist() == []  # the early tools/call ran nothing, not even an audit row


def test_a_request_of_the_protocol_without_a_handshake_is_served_without_initialize(tmp_path):
    # Guards: refuse_before_initialize judging by client_params alone (a 2026-07-28 client, whose envelope may carry
    # no client info, was then refused every request).
    command = [sys.executable, "-m", "memlab.cli", "serve", "--db", str(tmp_path / "memories"), "--taint", "INTERNAL"]
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    envelope = {"_meta": {types.PROTOCOL_VERSION_META_KEY: "2026-07-28", types.CLIENT_CAPABILITIES_META_KEY: {}}}
    try:
        listed = exchange(process, lines, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": envelope})
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    assert [tool["name"] for tool in listed["result"]["tools"]] == list(tools.TOOL_NAMES)
