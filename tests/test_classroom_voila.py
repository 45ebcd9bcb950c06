"""memlab.classroom_voila: the cap on kernels per visitor and in all. Voila serving the lesson in a browser is
tests/test_browser.py's."""

from __future__ import annotations

import pytest

from memlab.classroom_voila import Visits


def test_a_visitor_gets_kernels_up_to_its_cap():
    # Guards: Visits.refusal counting only running kernels (a burst of visits still starting then passes the cap).
    visits = Visits(per_visitor=2, in_all=10, pooled=0)
    assert visits.refusal("1.2.3.4", set()) is None
    visits.starting["1.2.3.4"] += 1
    visits.kernels["k1"] = "1.2.3.4"
    status, reason = visits.refusal("1.2.3.4", {"k1"})
    assert status == 429 and "2 lesson page(s)" in reason
    assert visits.refusal("5.6.7.8", {"k1"}) is None


def test_a_culled_kernel_frees_its_place():
    visits = Visits(per_visitor=1, in_all=10, pooled=0)
    visits.kernels["k1"] = "1.2.3.4"
    assert visits.refusal("1.2.3.4", {"k1"})[0] == 429
    assert visits.refusal("1.2.3.4", set()) is None
    assert visits.kernels == {}


@pytest.mark.parametrize(("running", "pooled", "refused"), [(2, 1, True), (2, 0, False), (1, 2, True)])
def test_the_classroom_starts_at_most_in_all_kernels_the_pool_included(running, pooled, refused):
    visits = Visits(per_visitor=5, in_all=3, pooled=pooled)
    live = set()
    for number in range(running):
        visits.kernels[f"k{number}"] = f"10.0.0.{number}"
        live.add(f"k{number}")
    refusal = visits.refusal("9.9.9.9", live)
    assert (refusal is not None and refusal[0] == 503) is refused
