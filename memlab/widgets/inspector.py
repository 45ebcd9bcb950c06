"""The shadow inspector: every version of a key at every level, its integrity, and which one each level's
sessions see, for either floor.

It reads the auditor's history (``shadow_table``), so inspecting adds nothing to the audit. Deleted versions
are struck through (and say so in ``status``); untrusted ones are hatched, and their ``integrity`` says so; a
column per level marks the version a session at that taint gets: ``✔ sees this`` whatever its floor, ``✔ untrusted
floor`` when only the default floor reads it (trust first: an untrusted version wins only where no trusted one is
readable, and a floor of TRUSTED never sees it). It follows the store live: every change the store records redraws
it.

``ShadowInspector(store, key="user-name")`` alone in a notebook cell shows the inspector; its table is HTML:

Examples:
    >>> ShadowInspector(store, key="user-name").table.value.startswith("<b>user-name</b>: 2 versions")
    True
"""

from __future__ import annotations

import html

import ipywidgets as widgets
import pandas as pd

from memlab.labels import Integrity
from memlab.levels import Level
from memlab.store import MemoryStore
from memlab.widgets.render import LEVEL_COLOURS, Panel, badge, html_table, integrity_badge, level_row, pill, plural
from memlab.widgets.views import saved_keys, seen_column, shadow_table

__all__ = ["ShadowInspector", "shadow_html"]

_SHOWN = ["classification", "integrity", "version", "content", "tags", "status", "saved_by", "deleted_by"]
_FLOORS = (
    "✔ sees this: the version sessions at that level get, whatever their floor; ✔ untrusted floor: only sessions "
    "with the default floor get it, a floor of TRUSTED sees no untrusted version (trust first: a readable trusted "
    "version wins for either floor)"
)


def _seen_mark(level: Level):
    """A level's cell: which floors' sessions at ``level`` get this version (default floor, floor of TRUSTED)."""

    def cell(seen: tuple[bool, bool]) -> str:
        default, trusted = seen
        if default and trusted:
            return pill("✔ sees this", LEVEL_COLOURS[level])
        if default or trusted:
            floor = Integrity.UNTRUSTED if default else Integrity.TRUSTED
            tip = f"only sessions at {level.name} with a floor of {floor.name} get this version"
            return pill(f"✔ {floor} floor", LEVEL_COLOURS[level], title=tip)
        return ""

    return cell


def _struck(row: dict) -> str:
    base = level_row("classification")(row)
    return base + (";text-decoration:line-through" if row["status"] == "deleted" else "")


def shadow_html(table: pd.DataFrame, key: str) -> str:
    """``shadow_table``'s rows as HTML: rows tinted by level (hatched when untrusted), deleted ones struck through,
    a column per level marking what each floor's sessions there get.

    Examples:
        >>> "line-through" in shadow_html(shadow_table(store, "favourite-language"), "favourite-language")
        True
    """
    if table.empty:
        return f"<p>No version of <code>{html.escape(key)}</code> exists for this agent.</p>"
    shown = table[_SHOWN].copy()
    for level in Level:  # without a trusted floor in this store, every session reads at the default one
        trusted = seen_column(level, Integrity.TRUSTED)
        by_trusted = table[trusted] if trusted in table else table[seen_column(level)]
        shown[level.name] = list(zip(table[seen_column(level)], by_trusted, strict=True))
    cells = {
        "classification": badge,
        "integrity": integrity_badge,
        **{level.name: _seen_mark(level) for level in Level},
    }
    legend = f"<br><small>{html.escape(_FLOORS)}</small>" if (table["integrity"] == "untrusted").any() else ""
    return f"<b>{html.escape(key)}</b>: {plural(len(table), 'version')}{legend}" + html_table(
        shown, cells=cells, row_style=_struck
    )


class ShadowInspector(Panel):
    """Pick an agent and a key; see its versions and who sees which.

    Args:
        store: the store to inspect.
        key: the key shown first (optional).
        agent: the namespace.

    Attributes:
        agent, key: text fields (``key`` suggests every key the agent has saved); show_button redraws;
        table: the HTML. ``close()`` stops following the store.

    Examples:
        >>> inspector = ShadowInspector(MemoryStore(), key="user-name")
        >>> "No version" in inspector.table.value
        True
    """

    def __init__(self, store: MemoryStore, key: str = "", agent: str = "main") -> None:
        self.store = store
        self.agent = widgets.Text(value=agent, description="agent", layout=widgets.Layout(width="220px"))
        self.key = widgets.Combobox(value=key, description="key", placeholder="a memory key", ensure_option=False)
        self.show_button = widgets.Button(description="show", button_style="primary")
        self.show_button.on_click(lambda _: self.refresh())
        self.table = widgets.HTML()
        picking = widgets.HBox([self.agent, self.key, self.show_button], layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox([picking, self.table], layout=widgets.Layout(width="100%"))
        self.refresh()
        store.listeners.append(self.refresh)

    def close(self) -> None:
        """Stop following the store."""
        if self.refresh in self.store.listeners:
            self.store.listeners.remove(self.refresh)

    def refresh(self) -> None:
        """Re-read the key's history (and the agent's keys) and redraw."""
        agent = self.agent.value.strip() or "main"
        self.key.options = saved_keys(self.store, agent)
        key = self.key.value.strip()
        if not key:
            self.table.value = "<p><i>Type or pick a key.</i></p>"
            return
        self.table.value = shadow_html(shadow_table(self.store, key, agent), key)
