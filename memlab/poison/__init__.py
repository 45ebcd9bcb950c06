"""The poisoning lab: how often an attacker's memory reaches a victim's answer, under each defence and ranking.

``generate`` makes poisons from a collection (``memlab.poison.generate``; the dense-trigger variant's words are
chosen against the embedder by ``memlab.poison.trigger``), ``inject`` writes them by one of the
three attack tiers (``memlab.poison.tiers``), the measures are named as the papers name them
(``memlab.poison.measures``: ISR, ASR-r@k, UD, availability) and ``run`` tabulates them per defence and ranking
(``memlab.poison.rows``, ``memlab.poison.runner``) as a DataFrame; ``results`` reads such tables back from a CSV
(``memlab.poison.cached``: the bundled LoCoMo results by default).
"""

from memlab.poison import trigger
from memlab.poison.cached import RESULTS_PATH, results
from memlab.poison.generate import ALL_VARIANTS, VARIANTS, Poison, contradict, generate, judged_targets
from memlab.poison.measures import benign_reads, injection_success, retrieval_success, utility
from memlab.poison.rows import DEFENCES, RANKINGS, Defence
from memlab.poison.runner import run, targets_for
from memlab.poison.tiers import TIERS, GullibleAgent, inject

__all__ = [
    "Poison",
    "VARIANTS",
    "ALL_VARIANTS",
    "trigger",
    "generate",
    "contradict",
    "judged_targets",
    "TIERS",
    "GullibleAgent",
    "inject",
    "injection_success",
    "retrieval_success",
    "utility",
    "benign_reads",
    "Defence",
    "DEFENCES",
    "RANKINGS",
    "run",
    "targets_for",
    "results",
    "RESULTS_PATH",
]
