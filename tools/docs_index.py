"""Write ``docs/index.md``, the site's front page, from ``README.md`` (the repository's front page).

Links into ``docs/`` lose their prefix; the sentence about where the documentation is becomes a pointer to the
pages. ``tests/test_docs.py`` fails when the committed ``docs/index.md`` is not what this writes.

Usage: ``python tools/docs_index.py`` from the repository's root.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE_NOTE = "The full documentation is in `docs/` (a site: `pip install -e '.[docs]' && mkdocs serve`)."


def index_page(readme: str) -> str:
    """The README with its links made relative to ``docs/``."""
    text = readme.replace("](docs/", "](")
    return text.replace(SITE_NOTE, "The pages of this site are listed at the bottom and in the navigation.")


def main() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (ROOT / "docs" / "index.md").write_text(index_page(readme), encoding="utf-8")


if __name__ == "__main__":
    main()
