"""Bounded-exhaustive checking: how deep it reaches in a given time, and how it compares with the random search.

Two measures, over the default alphabet (``memlab.check.Alphabet()``) unless ``--small`` picks the tests' one, or
over the label alphabet with ``--alphabet compartments`` (``Alphabet.compartments()``: PUBLIC, CONFIDENTIAL:hr,
CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal; policies that do not keep compartments are left out):

* depth by depth, per check, ``strict`` (or ``--policy``) judged exhaustively (no leak, so every distinct trace):
  the traces after and before reductions and the seconds taken; the next depth is only estimated
  (``check.estimate``: counted traces times a timed sample) once the run would pass ``--limit`` seconds, so the
  table says how deep one minute and ten minutes reach;
* for each shipped variant and each check that catches it: the random checker's scenarios until the leak
  (``Counterexample.trials``, 300 trials at most, seed 0) against the exhaustive search's traces until its first
  leak (shortest first), with both counterexamples' lengths.

Usage::

    python benchmarks/bench_exhaustive.py [--limit 600] [--small] [--alphabet compartments] [--policy NAME]
"""

from __future__ import annotations

import argparse
import os
import time

from memlab import Level, check
from memlab.policies import names


def _depths(alphabet: check.Alphabet, limit: float, policy: str) -> None:
    print(f"check            depth  after reductions  before reductions  seconds  ({policy}: every trace judged)")
    for name in check.CHECKS:
        spent = 0.0
        for depth in range(1, 10):
            guess = check.estimate(policy, check=name, depth=depth, alphabet=alphabet)
            if spent + guess.seconds > limit:
                print(
                    f"{name:<16} {depth:>5}  {guess.traces:>16,}  {'':>17}  ~{guess.seconds:,.0f} (estimate: "
                    f"{guess.seconds_per_trace * 1000:.1f} ms a trace)"
                )
                break
            result = check.exhaustive(policy, check=name, depth=depth, alphabet=alphabet, budget=None)
            spent = result.seconds
            print(f"{name:<16} {depth:>5}  {result.traces_after:>16,}  {result.traces_before:>17,}  {spent:>7.1f}")


def _against_random(alphabet: check.Alphabet) -> None:
    print("\npolicy              check            random: scenarios steps   exhaustive: traces steps  seconds")
    for policy in names():
        if alphabet.over_labels and not check.keeps_compartments(policy):
            continue
        for name in check.CHECKS:
            sampled = check.run_all(policy, checks=[name]).get(name)  # None: the check cannot examine the policy
            if sampled is None or not sampled.leak:
                continue
            found = check.exhaustive(policy, check=name, depth=3, alphabet=alphabet, budget=None)
            traces = f"{found.traces:,}" if found.leak else f"none in {found.traces:,}"
            steps = len(found.counterexample) if found.leak else "-"
            print(
                f"{policy:<19} {name:<16} {sampled.trials:>17} {len(sampled):>5}   {traces:>18} {steps:>5}"
                f"  {found.seconds:>7.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a check's deepest run may take")
    parser.add_argument("--small", action="store_true", help="the tests' names (one key, no tag; two levels)")
    parser.add_argument("--alphabet", choices=["levels", "compartments"], default="levels", help="levels or labels")
    parser.add_argument("--policy", default="strict", help="the policy judged depth by depth (default strict)")
    parser.add_argument("--no-random", action="store_true", help="leave out the comparison with the random search")
    args = parser.parse_args()
    names_ = {"keys": ("k1",), "tag": None} if args.small else {}
    if args.alphabet == "compartments":
        alphabet = check.Alphabet.compartments(**names_)
    elif args.small:
        alphabet = check.Alphabet(**names_, levels=(Level.PUBLIC, Level.CONFIDENTIAL))
    else:
        alphabet = check.Alphabet()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    print(f"alphabet: {alphabet}\n{started}, load average {os.getloadavg()[0]:.2f} at start, {os.cpu_count()} cores\n")
    _depths(alphabet, args.limit, args.policy)
    if not args.no_random:
        _against_random(alphabet)


if __name__ == "__main__":
    main()
