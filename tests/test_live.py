"""``memlab.storage.live``: the newest version of each key at each label, and which of them are live."""

from __future__ import annotations

from memlab import Level, MemoryStore
from memlab.labels import Label
from memlab.storage.live import labelled, latest, live_versions

HR = Label.parse("CONFIDENTIAL:hr")


def _store() -> MemoryStore:
    store = MemoryStore()
    public, hr = store.session(Level.PUBLIC, "main"), store.session(HR, "main")
    public.memory_save("a", "one")  # id 1
    public.memory_save("a", "two")  # id 2
    hr.memory_save("a", "three")  # id 3
    public.memory_save("b", "four")  # id 4
    public.memory_save("c", "five")  # id 5
    public.memory_delete("c")
    return store


def test_the_newest_version_at_each_label_and_the_live_ones():
    # Guards: live_versions without its `deleted_at is None` (seen failing: the deleted c was live).
    store = _store()
    newest = latest(store.storage.conn, 1, ["a", "b", "c", "d"])
    assert {place: version[:2] for place, version in newest.items()} == {
        ("a", 0): (2, 2),
        ("a", str(HR)): (3, 1),
        ("b", 0): (4, 1),
        ("c", 0): (5, 1),
    }
    assert live_versions(newest) == {"a": {Level.PUBLIC: 2, HR: 3}, "b": {Level.PUBLIC: 4}}


def test_one_key_is_read_as_several_are():
    # Guards: live._LATEST_OF_KEY without its GROUP BY (seen failing: one row for the key, not one per label).
    store = _store()
    one = latest(store.storage.conn, 1, ["a"])
    assert one == {place: version for place, version in latest(store.storage.conn, 1, ["a", "x"]).items()}
    assert len(one) == 2


def test_labelled_gives_every_level_as_a_label():
    assert labelled({Level.PUBLIC: 2, HR: 3}) == {Label(Level.PUBLIC): 2, HR: 3}
