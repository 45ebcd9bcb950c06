"""The notebooks' figures (issue 12, finding 7): labels that do not overlap, the markers the captions promise,
and colour never the only carrier of meaning."""

import itertools
import re

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg

from memlab import Level, MemoryStore, tools
from memlab.widgets.figures import INK, LEVEL_MARKERS, audit_timeline_figure, visibility_figure
from memlab.widgets.render import LEVEL_COLOURS


def shadowed_store() -> MemoryStore:
    store = MemoryStore()
    public, internal = store.session(Level.PUBLIC), store.session(Level.INTERNAL)
    public.memory_save("user-name", "Sam")
    internal.memory_save("user-name", "Samantha Rivera")
    internal.memory_delete("user-name")
    store.session(Level.CONFIDENTIAL).memory_save("merger", "Initech")
    return store


def _overlaps(figure, labels) -> list[tuple[str, str]]:
    renderer = FigureCanvasAgg(figure).get_renderer()
    figure.draw(renderer)
    boxes = [(label.get_text(), label.get_window_extent(renderer)) for label in labels if label.get_text()]
    return [(a, b) for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2) if box_a.overlaps(box_b)]


def test_the_visibility_figure_names_every_level_without_overlap_and_draws_deleted_versions_hollow():
    store = shadowed_store()
    before = len(store.audit())
    figure = visibility_figure(store, ["user-name", "merger"])
    assert len(store.audit()) == before  # drawing reads history, not sessions
    axis = figure.axes[0]
    assert _overlaps(figure, axis.get_xticklabels()) == []
    assert [label.get_text() for label in axis.get_yticklabels()] == [
        "user-name@PUBLIC v1",
        "user-name@INTERNAL v1 (deleted)",
        "merger@CONFIDENTIAL v1",
    ]
    hollow = [c for c in axis.collections if c.get_facecolors().size == 0 or c.get_facecolors()[0][3] == 0]
    assert len(hollow) == 1 and list(hollow[0].get_offsets()[0]) == [1, 1]  # INTERNAL column, the deleted row
    assert [t.get_text() for t in axis.get_legend().get_texts()] == ["seen by that level", "deleted (seen by none)"]


def test_the_audit_timeline_has_a_legend_and_a_shape_per_level():
    store = MemoryStore()
    low, high = store.session(Level.PUBLIC, session_id="low"), store.session(Level.CONFIDENTIAL, session_id="high")
    tools.call(low, "memory_save", {"key": "k", "content": "v"})
    tools.call(high, "memory_get", {"key": "missing"})
    figure = audit_timeline_figure(store.audit())
    axis = figure.axes[0]
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert legend == ["PUBLIC", "CONFIDENTIAL", "not ok (refused, invalid, not found)"]
    assert len({LEVEL_MARKERS[level] for level in Level}) == len(Level)  # shape alone tells the level
    assert [label.get_text() for label in axis.get_yticklabels()] == ["low", "high"]
    assert _overlaps(figure, axis.get_yticklabels() + axis.get_xticklabels()) == []


def _ink_of(svg: str) -> set[str]:
    """Every colour the SVG paints with, by name or hex."""
    return {colour.lower() for colour in re.findall(r"(?:fill|stroke|stop-color)\s*[:=]\s*\"?\s*([#\w]+)", svg)}


def test_a_chart_takes_the_pages_colours_and_has_no_white_box():
    """Issue 23: in JupyterLab's and Voila's dark theme the charts stayed white boxes with black text. A chart now
    shows itself as an SVG with no background, its text, axes and ticks in the page's own text colour
    (``currentColor``): dark on a light page, light on a dark one; the levels keep their hues.
    Guards: ThemedFigure drawn on a white facecolor; the ink left black instead of currentColor."""
    store = shadowed_store()
    tools.call(store.session(Level.PUBLIC, session_id="low"), "memory_get", {"key": "missing"})
    for figure in (visibility_figure(store, ["user-name", "merger"]), audit_timeline_figure(store.audit())):
        assert figure.get_facecolor()[3] == 0 and figure.axes[0].get_facecolor()[3] == 0
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        assert np.asarray(canvas.buffer_rgba())[0, 0, 3] == 0  # a corner of the picture: nothing drawn there
        shown = figure._repr_html_()
        assert shown.lstrip().startswith("<div") and "<svg" in shown and "<?xml" not in shown
        ink = _ink_of(shown)
        assert "currentcolor" in ink
        assert not ink & {"#ffffff", "#fff", "white", "#000000", "#000", "black", INK.lower()}, ink
        assert {LEVEL_COLOURS[Level.PUBLIC].lower(), LEVEL_COLOURS[Level.CONFIDENTIAL].lower()} <= ink
        assert "max-width:100%" in shown  # it shrinks with a narrow page, never cut


def test_the_figures_draw_untrusted_versions_and_calls_at_their_levels():
    # Guards: figures.visibility_figure parsing a deleted version's label as a level (INTERNAL@untrusted then
    # refused); audit_timeline_figure's legend matching the taint's text (an untrusted-only level then unnamed).
    store = MemoryStore()
    browser = store.session(Level.INTERNAL, session_id="browser", integrity="untrusted", source="web page")
    browser.memory_save("tip", "pay Mallory")
    browser.memory_delete("tip")
    axis = visibility_figure(store, ["tip"]).axes[0]
    assert [label.get_text() for label in axis.get_yticklabels()] == ["tip@INTERNAL@untrusted v1 (deleted)"]
    hollow = [c for c in axis.collections if c.get_facecolors().size == 0 or c.get_facecolors()[0][3] == 0]
    assert list(hollow[0].get_offsets()[0]) == [1, 0]  # the INTERNAL column
    legend = [t.get_text() for t in audit_timeline_figure(store.audit()).axes[0].get_legend().get_texts()]
    assert legend == ["INTERNAL", "not ok (refused, invalid, not found)"]
