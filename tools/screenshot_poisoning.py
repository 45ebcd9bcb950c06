"""Screenshot the poisoning lab widget (notebook 07's last cell), in the light and the dark theme.

Usage: python tools/screenshot_poisoning.py

Serves a one-cell notebook with ``memlab classroom --notebook`` (Voila, as tools/screenshot_integrity.py does) and
takes ``docs/images/poisoning-lab-{light,dark}.png`` with headless Chromium (Debian's ``chromium``, driven by
Playwright): the bundled LoCoMo results (``data/results/poison/locomo/poison.csv``), the direct tier at 1% poisoned,
the lexical ranking, k = 10.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from voila_shot import shoot  # noqa: E402

LAB = f"""from memlab import widgets as mw
from memlab.poison import results

lab = mw.poisoning_lab(results({str(ROOT / "data" / "results" / "poison" / "locomo" / "poison.csv")!r}))
lab.widget.add_class("memlab-poisoning")
lab"""


def main() -> int:
    shoot(
        LAB,
        "poisoning-lab",
        ".memlab-poisoning",
        lambda page: page.locator(".memlab-poisoning svg").first,
        viewport=(1200, 1000),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
