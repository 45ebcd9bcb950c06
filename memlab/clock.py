"""The store's clock as every row records it: ISO 8601 UTC text to the microsecond."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["utc_now", "utc_text"]


def utc_now() -> datetime:
    """The time now, in UTC: a store's default clock."""
    return datetime.now(UTC)


_ISO_UTC = "%04d-%02d-%02dT%02d:%02d:%02d.%06d+00:00"


def utc_text(moment: datetime) -> str:
    """``moment.astimezone(UTC).isoformat(timespec="microseconds")``, exactly, at a fraction of its cost (every
    call writes one); a naive ``moment`` is local time, as ``astimezone`` takes it.

    Examples:
        >>> utc_text(datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC))
        '2026-01-02T03:04:05.000006+00:00'
    """
    if moment.tzinfo is not UTC:
        moment = moment.astimezone(UTC)
    return _ISO_UTC % (
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
        moment.second,
        moment.microsecond,
    )
