"""Agents: tool definitions in OpenAI's and Anthropic's shapes, the spine, and a scripted agent replayed in-process
and over MCP, with the audit trail checked afterwards; a run in another process sees the same memories."""

import json
import re
import subprocess
import sys
import types as pytypes
from importlib.resources import files

import pytest
from jsonschema import Draft202012Validator
from mcp import types as mcp_types

from memlab import InvalidArgument, Level, MemoryStore, spine, tools
from memlab.policy import LEVEL_LIKE_ARGUMENTS
from tests.mcp_client import ROOT, connect, run

# The request shapes, as OpenAI's and Anthropic's API references describe a client-defined function tool.
NAME = {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}
OPENAI_CHAT_TOOL = {
    "type": "object",
    "required": ["type", "function"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": NAME,
                "description": {"type": "string"},
                "parameters": {"type": "object"},
                "strict": {"type": ["boolean", "null"]},
            },
        },
    },
}
OPENAI_RESPONSES_TOOL = {
    "type": "object",
    "required": ["type", "name", "parameters", "strict"],
    "additionalProperties": False,
    "properties": {
        "type": {"const": "function"},
        "name": NAME,
        "description": {"type": ["string", "null"]},
        "parameters": {"type": ["object", "null"]},
        "strict": {"type": ["boolean", "null"]},
    },
}
ANTHROPIC_TOOL = {
    "type": "object",
    "required": ["name", "input_schema"],
    "additionalProperties": False,
    "properties": {
        "type": {"enum": ["custom", None]},
        "name": {**NAME, "minLength": 1, "maxLength": 128},
        "description": {"type": "string"},
        "input_schema": {
            "type": "object",
            "required": ["type"],
            "properties": {
                "type": {"const": "object"},
                "properties": {"type": ["object", "null"]},
                "required": {"type": ["array", "null"], "items": {"type": "string"}},
            },
        },
        "cache_control": {"type": ["object", "null"]},
    },
}


def parameters_of(shape: str) -> list[dict]:
    if shape == "openai":
        return [tool["function"]["parameters"] for tool in tools.for_openai()]
    if shape == "responses":
        return [tool["parameters"] for tool in tools.for_openai("responses")]
    return [tool["input_schema"] for tool in tools.for_anthropic()]


@pytest.mark.parametrize(
    "definitions, shape",
    [
        (tools.for_openai(), OPENAI_CHAT_TOOL),
        (tools.for_openai("responses"), OPENAI_RESPONSES_TOOL),
        (tools.for_anthropic(), ANTHROPIC_TOOL),
    ],
    ids=["openai-chat-completions", "openai-responses", "anthropic-messages"],
)
def test_tool_definitions_have_the_shape_each_api_takes(definitions, shape):
    validator = Draft202012Validator(shape)
    for definition in definitions:
        assert not list(validator.iter_errors(definition)), definition
    assert len(definitions) == 5
    json.dumps(definitions)


@pytest.mark.parametrize("shape", ["openai", "responses", "anthropic"])
def test_their_parameters_are_draft_2020_12_schemas_with_no_level_parameter(shape):
    for parameters, schema in zip(parameters_of(shape), tools.SCHEMAS, strict=True):
        Draft202012Validator.check_schema(parameters)  # against the Draft 2020-12 meta-schema
        assert parameters == schema["parameters"] and parameters["type"] == "object"
        assert not {re.sub(r"[^a-z]", "", name.lower()) for name in parameters["properties"]} & LEVEL_LIKE_ARGUMENTS
        mcp_types.Tool(name=schema["name"], input_schema=parameters)  # and MCP's Tool takes it as inputSchema
    save = Draft202012Validator(parameters_of(shape)[0])
    assert save.is_valid({"key": "user-name", "content": "Sam", "tags": ["personal"]})
    assert not save.is_valid({"key": "user-name", "content": "Sam", "classification": "PUBLIC"})


def test_definitions_are_copies_and_the_openai_api_is_checked():
    before = json.dumps(tools.SCHEMAS)
    tools.for_anthropic()[0]["input_schema"]["properties"]["classification"] = {"type": "string"}
    tools.for_openai()[0]["function"]["parameters"]["required"].append("classification")
    tools.for_openai("responses")[1]["parameters"]["properties"].clear()
    assert json.dumps(tools.SCHEMAS) == before
    assert tools.for_openai("responses")[0]["strict"] is False and "strict" not in tools.for_openai()[0]["function"]
    with pytest.raises(InvalidArgument, match="unknown OpenAI api 'assistants'"):
        tools.for_openai("assistants")


def test_the_spine_ships_with_the_package_and_says_what_to_do():
    assert spine() == files("memlab").joinpath("SPINE.md").read_text(encoding="utf-8")
    text = spine().lower()
    for promise in ["personal details", "project context", "preferences", "kebab-case", "recall before you answer"]:
        assert promise in text
    assert "classification is never yours to choose" in text
    assert all(f"`{name}`" in spine() for name in tools.TOOL_NAMES)
    import tomllib

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "SPINE.md" in package_data["memlab"]


# -- a scripted agent: the tool calls a model following the spine makes over two conversations ------------------

REPLAY = [
    # "Hi, I'm Sam Rivera. I lead the Atlas team; the beta ships on 14 March. Keep answers short, please."
    ("memory_search", {"query": "Sam Rivera Atlas team"}),
    ("memory_save", {"key": "user-name", "content": "Sam Rivera", "tags": ["personal"]}),
    ("memory_save", {"key": "user-role", "content": "Sam leads the Atlas team", "tags": ["personal", "atlas"]}),
    (
        "memory_save",
        {"key": "project-atlas-beta-date", "content": "The Atlas beta ships on 14 March", "tags": ["atlas"]},
    ),
    (
        "memory_save",
        {"key": "preference-answer-length", "content": "Sam wants short answers", "classification": "PUBLIC"},
    ),
    ("memory_save", {"key": "user-home-city"}),  # a malformed call; the model reads the error and retries
    ("memory_save", {"key": "user-home-city", "content": "Sam lives in Lisbon", "tags": ["personal"]}),
    # Next day: "When does the beta ship?" ... "It slipped to 28 March." ... "Forget where I live."
    ("memory_search", {"query": "when does the beta ship?", "max_results": 3}),
    ("memory_get", {"key": "project-atlas-beta-date"}),
    (
        "memory_save",
        {"key": "project-atlas-beta-date", "content": "The Atlas beta ships on 28 March", "tags": ["atlas"]},
    ),
    ("memory_delete", {"key": "user-home-city"}),
    ("memory_list", {"tag": "atlas"}),
    ("memory_get", {"key": "user-home-city"}),
]
TAINT, AGENT = "INTERNAL", "sam"


def replay_openai_tool_calls(session) -> list[dict]:
    """The host loop for Chat Completions: each tool call's JSON-string arguments, through ``tools.call``."""
    results = []
    for number, (name, arguments) in enumerate(REPLAY):
        tool_call = {
            "id": f"call_{number}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        result = tools.call(session, tool_call["function"]["name"], json.loads(tool_call["function"]["arguments"]))
        message = {"role": "tool", "tool_call_id": tool_call["id"], "content": json.dumps(result)}
        results.append(json.loads(message["content"]))
    return results


def comparable(result: dict) -> dict:
    """A result without its save times (two databases, two clocks)."""
    text = json.dumps(result)
    return json.loads(re.sub(r'"saved_at": "[^"]+"', '"saved_at": "-"', text))


def check_replay(results: list[dict]) -> None:
    assert results[0] == {"query": "Sam Rivera Atlas team", "results": []}
    assert [result.get("classification") for result in results[1:5]] == ["INTERNAL"] * 4
    assert results[5] == {"error": {"code": "invalid_argument", "message": "memory_save needs 'content'"}}
    assert results[7]["results"][0]["key"] == "project-atlas-beta-date"
    assert results[8]["content"] == "The Atlas beta ships on 14 March"
    assert results[9] == {
        "saved": True,
        "key": "project-atlas-beta-date",
        "classification": "INTERNAL",
        "integrity": "trusted",
        "version": 2,
    }
    assert [memory["key"] for memory in results[11]["memories"]] == ["project-atlas-beta-date", "user-role"]
    assert results[11]["memories"][0]["content"] == "The Atlas beta ships on 28 March"
    assert results[12] == {"found": False, "key": "user-home-city"}


def audit_trail(store: MemoryStore) -> list[list]:
    audit = store.audit()
    columns = ["agent", "taint", "tool", "key", "query", "outcome", "records", "notes", "message"]
    return audit[columns].fillna("").values.tolist()


def check_audit(trail: list[list]) -> None:
    assert [row[2] for row in trail] == [name for name, _ in REPLAY]
    assert [row[5] for row in trail] == ["ok"] * 5 + ["invalid_argument"] + ["ok"] * 6 + ["not_found"]
    assert {(row[0], row[1]) for row in trail} == {(AGENT, TAINT)}
    assert trail[4][7] == ["stripped argument 'classification': the classification is always the session's taint"]
    assert trail[4][6] == ["preference-answer-length@INTERNAL/v1"]
    assert trail[9][6] == ["project-atlas-beta-date@INTERNAL/v2"]
    assert trail[10][6] == ["user-home-city@INTERNAL/v1"]
    assert trail[11][6] == ["project-atlas-beta-date@INTERNAL/v2", "user-role@INTERNAL/v1"]


def test_a_scripted_agent_through_tools_call_and_through_mcp_leaves_the_same_results_and_audit(tmp_path):
    direct_db, served_db, log = tmp_path / "direct", tmp_path / "served", tmp_path / "server.log"  # store folders
    with MemoryStore(direct_db) as store:
        direct = replay_openai_tool_calls(store.session(TAINT, AGENT))
        direct_trail = audit_trail(store)

    async def over_mcp():
        async with connect(served_db, TAINT, AGENT, log=log) as client:
            served = []
            for name, arguments in REPLAY:  # as an MCP host forwards a model's tool use
                result = await client.call_tool(name, arguments)
                assert result.is_error == ("error" in result.structured_content)
                served.append(result.structured_content)
            return served

    served = run(over_mcp, log)
    check_replay(direct)
    assert [comparable(result) for result in served] == [comparable(result) for result in direct]
    with MemoryStore(served_db) as store:
        served_trail = audit_trail(store)
    check_audit(direct_trail)
    assert served_trail == direct_trail


WAKE_UP = """
import json, sys
from memlab import MemoryStore
with MemoryStore(sys.argv[1]) as store:
    public, internal = store.session("PUBLIC", "sam"), store.session("INTERNAL", "sam")
    print(json.dumps({
        "public": [m.key for m in public.memory_list()],
        "internal": [m.key for m in internal.memory_list()],
        "recall": internal.recall(budget_chars=1000),
    }))
"""


def test_a_triggered_run_in_another_process_sees_the_same_memories_under_its_own_taint(tmp_path):
    db = tmp_path / "memories"
    with MemoryStore(db) as store:
        replay_openai_tool_calls(store.session(TAINT, AGENT))
        store.session(Level.PUBLIC, AGENT).memory_save("user-timezone", "Sam works on Lisbon time", tags=["personal"])
    woke = subprocess.run(
        [sys.executable, "-c", WAKE_UP, str(db)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert woke.returncode == 0, woke.stderr
    seen = json.loads(woke.stdout)
    assert seen["public"] == ["user-timezone"]
    assert seen["internal"] == [
        "preference-answer-length",
        "project-atlas-beta-date",
        "user-name",
        "user-role",
        "user-timezone",
    ]
    assert "- project-atlas-beta-date: The Atlas beta ships on 28 March" in seen["recall"]
    assert "Lisbon time" in seen["recall"] and "Sam lives in Lisbon" not in seen["recall"]
    with MemoryStore(db) as store:
        assert store.audit()["tool"].tolist()[-3:] == ["memory_list", "memory_list", "memory_recall"]
        assert store.audit()["taint"].tolist()[-3:] == ["PUBLIC", "INTERNAL", "INTERNAL"]


def test_the_readme_host_loop_runs_as_written(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text().split("## Use it from an agent\n", 1)[1].split("\n## ", 1)[0]
    (example,) = re.findall(r"```python\n(.+?)\n```", readme, re.DOTALL)
    requests = []

    class Messages:
        def create(self, **request):
            requests.append(request)
            tool_use = {"type": "tool_use", "id": "toolu_1", "name": "memory_save"}
            saved = {"key": "project-atlas-beta-date", "content": "The Atlas beta ships on 14 March"}
            return pytypes.SimpleNamespace(content=[pytypes.SimpleNamespace(**tool_use, input=saved)])

    fake = pytypes.ModuleType("anthropic")
    fake.Anthropic = lambda: pytypes.SimpleNamespace(messages=Messages())
    monkeypatch.setitem(sys.modules, "anthropic", fake)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    namespace["store"].close()
    (request,) = requests
    assert request["tools"] == tools.for_anthropic() and request["system"].startswith(spine())
    with MemoryStore(tmp_path / "memories") as store:
        memory = store.session(Level.INTERNAL, "sam").memory_get("project-atlas-beta-date")
        assert memory.classification == Level.INTERNAL
