"""The policy lab: pick a policy variant and a check, run it, read the verdict and the counterexample's steps.

Examples:
    >>> verdict(run_check("existence-oracle", "noninterference", trials=50))["verdict"]
    'LEAK'
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd

from memlab import check, policies
from memlab.check import Counterexample, NoLeak
from memlab.errors import InvalidArgument
from memlab.levels import Level
from memlab.policy import Policy
from memlab.widgets.render import LEVEL_TINTS, Panel, html_table

__all__ = ["run_check", "verdict", "steps_table", "result_html", "PolicyLab"]

STEP_COLUMNS = ["#", "world", "session", "call", "note"]


def run_check(
    policy: Policy | str, check_name: str = "noninterference", *, trials: int = 300, seed: int = 0, max_ops: int = 8
) -> Counterexample | NoLeak:
    """Run one of ``memlab.check.CHECKS`` on a policy, by name or object (see ``memlab.check.run_all``).

    Raises:
        InvalidArgument: an unknown policy or check, or a check that cannot examine the policy (``Check.inapplicable``:
            integrity noninterference under a policy whose stores refuse a trusted floor).

    Examples:
        >>> run_check("strict", "shadowing", trials=10).leak
        False
    """
    why = check.CHECKS.get(check_name).inapplicable(policies.resolve(policy))
    if why:
        raise InvalidArgument(f"check {check_name} cannot examine policy {policies.resolve(policy).name!r}: {why}")
    return check.run_all(policy, checks=[check_name], trials=trials, seed=seed, max_ops=max_ops)[check_name]


def verdict(result: Counterexample | NoLeak) -> dict[str, Any]:
    """A check's outcome as plain data: ``check``, ``policy``, ``verdict`` (``LEAK``/``pass``), ``steps``,
    ``scenarios``, ``seconds``, a one-line ``summary``, and for a leak ``explanation``, ``observed``, ``expected``.

    Examples:
        >>> verdict(run_check("strict", "write_down", trials=5))["verdict"]
        'pass'
    """
    if not result.leak:
        return {
            "check": result.check,
            "policy": result.policy,
            "verdict": "pass",
            "steps": None,
            "scenarios": result.trials,
            "seconds": round(result.seconds, 2),
            "summary": str(result),
        }
    level = f" at {result.level}" if result.level is not None else ""
    return {
        "check": result.check,
        "policy": result.policy.name,
        "verdict": "LEAK",
        "steps": len(result),
        "scenarios": result.trials,
        "seconds": round(result.seconds, 2),
        "summary": f"{result.check} leak under {result.policy.name}{level} in {len(result)} steps",
        "explanation": result.explanation,
        "observed": repr(result.observed),
        "expected": repr(result.expected),
    }


def steps_table(result: Counterexample | NoLeak) -> pd.DataFrame:
    """The counterexample step by step (``Counterexample.rows()``); no rows when the check passed.

    Examples:
        >>> steps_table(run_check("existence-oracle", trials=50))["call"].iloc[-1]
        "low1.memory_get(key='k1')"
    """
    return pd.DataFrame(result.rows() if result.leak else [], columns=STEP_COLUMNS)


def _leak_row(row: dict) -> str:
    # RESTRICTED's red tint, mixed into the theme's background: readable in light and dark themes.
    return f"background:{LEVEL_TINTS[max(Level)]};font-weight:bold" if row["note"] else ""


def result_html(result: Counterexample | NoLeak) -> str:
    """The verdict as a coloured banner, then, for a leak, its steps and what was observed versus expected."""
    found = verdict(result)
    colour = "#c62828" if result.leak else "#2e7d32"
    banner = (
        f'<div style="background:{colour};color:#ffffff;padding:4px 8px;font-weight:bold">{found["verdict"]}: '
        f"{html.escape(found['summary'])}</div>"
    )
    if not result.leak:
        return banner
    return (
        f"{banner}<p>{html.escape(found['explanation'])} (found after {found['scenarios']} scenarios)</p>"
        + html_table(steps_table(result), row_style=_leak_row)
        + f"<p>observed: <code>{html.escape(found['observed'])}</code><br>"
        f"expected: <code>{html.escape(found['expected'])}</code></p>"
    )


class PolicyLab(Panel):
    """Pick a policy and a check, run it, and read the counterexample as a table.

    Args:
        choices: the policies offered, by name or object (e.g. a notebook's own ``Policy`` subclass); by
            default every registered one, ``strict`` first.

    Attributes:
        policy: a dropdown of the policies.
        check: a dropdown of the checks.
        trials: an integer field, the scenarios to try.
        seed: an integer field, the random seed.
        run_button: runs the check.
        about: what the policy models.
        output: the verdict and steps (HTML).
        last: the last result object.

    Examples:
        >>> lab = PolicyLab()
        >>> lab.policy.label = "frozen-taint"; lab.run_button.click()
        >>> lab.last.leak
        True
    """

    def __init__(self, choices: Sequence[Policy | str] | None = None) -> None:
        offered = [policies.resolve(choice) for choice in (choices or policies.names())]
        self.policy = widgets.Dropdown(options=[(p.name, p) for p in offered], description="policy")
        self.check = widgets.Dropdown(options=list(check.CHECKS), description="check")
        self.trials = widgets.BoundedIntText(value=300, min=1, max=10_000, description="scenarios")
        self.seed = widgets.IntText(value=0, description="seed")
        self.run_button = widgets.Button(description="run check", button_style="primary")
        self.run_button.on_click(lambda _: self.run())
        self.about, self.output = widgets.HTML(), widgets.HTML()
        self.last: Counterexample | NoLeak | None = None
        self.policy.observe(lambda _: self._describe(), names="value")
        controls = widgets.HBox([widgets.VBox([self.policy, self.check]), widgets.VBox([self.trials, self.seed])])
        self.widget = widgets.VBox([controls, self.about, self.run_button, self.output])
        self._describe()

    def _describe(self) -> None:
        chosen = self.policy.value
        self.about.value = f"<i><code>{html.escape(chosen.name)}</code> models: {html.escape(chosen.description)}</i>"

    def run(self) -> Counterexample | NoLeak | None:
        """Run the picked check on the picked policy and show the result (None, and why, when the check cannot
        examine the policy)."""
        self.output.value = "<i>running…</i>"
        try:
            self.last = run_check(self.policy.value, self.check.value, trials=self.trials.value, seed=self.seed.value)
        except InvalidArgument as refusal:  # a check that cannot examine the picked policy says why
            self.last, self.output.value = None, f"<p>{html.escape(str(refusal))}</p>"
            return None
        self.output.value = result_html(self.last)
        return self.last
