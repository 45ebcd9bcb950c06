"""``python -m memlab.cli``: the ``memlab`` command, for an environment where its script is not on the PATH."""

from memlab.cli import main

raise SystemExit(main())
