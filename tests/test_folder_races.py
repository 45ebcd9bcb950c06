"""Processes racing on one store folder: opening a brand-new folder at once."""

from __future__ import annotations

import multiprocessing

from memlab import MemoryStore

ROUNDS = 50


def _open_each(base: str, barrier, failures) -> None:
    for n in range(ROUNDS):
        barrier.wait(timeout=60)  # all three processes open folder n together
        try:
            MemoryStore(f"{base}/store-{n}", layout="folder").close()
        except Exception as error:  # any failure is reported, so no sibling waits at the barrier for a dead one
            failures.put(f"{type(error).__name__}: {error}")
    failures.put(None)


def test_three_processes_opening_one_new_folder_all_succeed(tmp_path):
    """Guards: the emptiness check and the catalogue's creation done outside the folder's lock (3 of 150 failed
    with "holds other files (catalogue.db)" before)."""
    context = multiprocessing.get_context("fork")
    barrier, failures = context.Barrier(3), context.Queue()
    children = [context.Process(target=_open_each, args=(str(tmp_path), barrier, failures)) for _ in range(3)]
    for child in children:
        child.start()
    errors, done = [], 0
    while done < len(children):
        message = failures.get(timeout=120)
        if message is None:
            done += 1
        else:
            errors.append(message)
    for child in children:
        child.join(timeout=60)
    assert errors == [] and [child.exitcode for child in children] == [0, 0, 0]
    for n in range(ROUNDS):
        with MemoryStore(tmp_path / f"store-{n}") as store:
            assert store.verify().ok
