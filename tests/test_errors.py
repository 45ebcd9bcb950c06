"""memlab.errors: the exception hierarchy and each error's code, the name a tool result carries."""

from __future__ import annotations

import pytest

import memlab
from memlab import errors, tools
from memlab.errors import MemlabError

ERRORS = [getattr(errors, name) for name in errors.__all__]


@pytest.mark.parametrize(
    ("error", "code", "builtin"),
    [
        (errors.MemlabError, "error", Exception),
        (errors.InvalidArgument, "invalid_argument", ValueError),
        (errors.NotFound, "not_found", LookupError),
        (errors.Denied, "denied", MemlabError),
        (errors.TaintError, "taint_error", MemlabError),
        (errors.SchemaError, "schema_error", MemlabError),
        (errors.IntegrityError, "integrity_error", MemlabError),
        (errors.InternalError, "internal_error", MemlabError),
        (errors.PurgeIncomplete, "purge_incomplete", MemlabError),
    ],
)
def test_each_error_has_its_code_and_is_caught_as_its_builtin(error, code, builtin):
    assert error.code == code
    assert issubclass(error, MemlabError)
    with pytest.raises(builtin):  # InvalidArgument is a ValueError: a caller's `except ValueError` catches it
        raise error("message")


def test_codes_are_unique_and_every_error_is_exported_by_the_package():
    codes = [error.code for error in ERRORS]
    assert len(set(codes)) == len(codes)
    assert all(getattr(memlab, error.__name__) is error for error in ERRORS)


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [("memory_get", {}, "invalid_argument"), ("memory_delete", {"key": "never-saved"}, "not_found")],
)
def test_a_tool_call_reports_the_errors_code_and_message(store, tool, arguments, code):
    # Guards: tools.call rendering the error's class name (NotFound) instead of its code (not_found).
    result = tools.call(store.session("PUBLIC", "main"), tool, arguments)
    assert result["error"]["code"] == code
    assert result["error"]["message"]
