"""``memlab.clock``: the time every row records, as ISO 8601 UTC text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memlab.clock import utc_text


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        datetime(2026, 1, 1, 0, 30, tzinfo=timezone(timedelta(hours=5, minutes=30))),  # the day before in UTC
        datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-8))),
        datetime(2026, 6, 1, 12, 0),  # naive: local time
    ],
)
def test_utc_text_is_isoformat_in_utc_to_the_microsecond(moment):
    # Guards: utc_text skipping astimezone for a non-UTC zone (the local wall time written as UTC).
    assert utc_text(moment) == moment.astimezone(UTC).isoformat(timespec="microseconds")
