"""Every row's time is ``isoformat`` of the clock's time in UTC, written by a cheaper formatter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from memlab import MemoryStore
from memlab.store import utc_text

ZONES = st.one_of(
    st.none(),
    st.just(UTC),
    st.timedeltas(min_value=timedelta(hours=-23, minutes=-59), max_value=timedelta(hours=23, minutes=59)).map(timezone),
)
# Far enough from the calendar's ends that every zone's time has a UTC time.
MOMENTS = st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31), timezones=ZONES)


@given(MOMENTS)
def test_a_time_is_written_as_isoformat_writes_it_in_utc(moment):
    # Guards: the microseconds padded to 3 digits (`%03d`): seen failing.
    # Guards: a zone other than UTC written unconverted (no astimezone when tzinfo is not UTC): seen failing.
    assert utc_text(moment) == moment.astimezone(UTC).isoformat(timespec="microseconds")


def test_the_store_clock_writes_rows_in_utc_with_microseconds():
    moment = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    store = MemoryStore(clock=lambda: moment)
    assert store.now() == "2026-03-04T03:06:07.000000+00:00"
