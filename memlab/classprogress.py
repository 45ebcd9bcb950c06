"""Where a class lives (``memlab classroom --class``): its shared store and its progress records, in a folder or
in a PostgreSQL database.

A class store is a folder (``DIR/store``, a folder store; ``DIR/progress``, a JSON record per student;
``DIR/resets``, the teacher's reset counters) or a ``postgresql://`` URL (the store, and two tables beside it
under row-level security: ``memlab.storage.postgres.progress``). ``ClassStore(where).progress()`` is the
teacher's view of every record; ``progress(student)`` is a student's kernel's: it writes that student's record
and reads that student's resets, and nothing else (on PostgreSQL the database refuses the rest too).

A URL's password never goes into the kernels' environment: ``hand_over`` writes the URL to a file only this
user can read and gives the kernels its path and the URL without its password; ``taken_over`` reads it back.

Examples:
    >>> printable("postgresql://teacher:s3cret@db.school/class?sslmode=require&password=s3cret")
    'postgresql://teacher:***@db.school/class?sslmode=require&password=***'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from abc import ABC, abstractmethod
from pathlib import Path

from memlab.errors import Denied, InvalidArgument, MemlabError
from memlab.storage.postgres import is_postgres_url
from memlab.store import MemoryStore

__all__ = [
    "CLASS_ENV",
    "SECRET_ENV",
    "STUDENT_CONNECTIONS",
    "TEACHER_CONNECTIONS",
    "ClassFull",
    "ClassStore",
    "Progress",
    "hand_over",
    "hidden",
    "printable",
    "taken_over",
    "token_digest",
]

CLASS_ENV, SECRET_ENV = "MEMLAB_CLASS", "MEMLAB_CLASS_SECRET"
"""What ``memlab classroom --class`` gives Voila (and so every kernel): the class store as ``printable`` shows it,
and, for a URL with a password, the file that holds the whole URL."""

STUDENT_CONNECTIONS = 3
"""What a joined student's page holds on PostgreSQL: its store's owner's connection and one session connection
(a pool of one), and its records' connection, which holds the page's seat."""
TEACHER_CONNECTIONS = 6
"""The connections no student may take on PostgreSQL: the teacher's page holds three (the store's owner's, one
session connection, the records'), and a second teacher's page (a reload, a second screen) fits beside it."""


class ClassFull(MemlabError):
    """Every seat of the class is taken: another student's page would eat into the teacher's connections."""


def token_digest(token: str) -> str:
    """What the kernels are given of the teacher's token: its SHA-256, so no kernel (a student's) holds the token.

    Examples:
        >>> token_digest("s3cret")[:16]
        '1ec1c26b50d5d3c5'
    """
    return hashlib.sha256(token.encode()).hexdigest()


# Where a libpq URL may carry a password: after the user name, and as a query parameter.
_PASSWORDS = (re.compile(r"(://[^:/@?]*:)([^@/]*)(@)"), re.compile(r"([?&]password=)([^&]*)()"))


def printable(where: str | Path) -> str:
    """``where`` as it may be printed: a URL's password (in its user part or its query) as ``***``."""
    text = str(where)
    if "://" not in text:
        return text
    for pattern in _PASSWORDS:
        text = pattern.sub(r"\1***\3", text)
    return text


def hidden(text: str, where: str | Path) -> str:
    """``text`` (an error message, say) with every password of the URL ``where`` in it as ``***``."""
    for pattern in _PASSWORDS:
        for match in pattern.finditer(str(where)):
            if match[2]:
                text = text.replace(match[2], "***")
    return text


def hand_over(where: str | Path, folder: Path) -> dict[str, str]:
    """The environment that hands the class store ``where`` to the kernels; a URL with a password is written to a
    file in ``folder`` (which the caller makes private and removes), never put in the environment."""
    if not is_postgres_url(str(where)):
        return {CLASS_ENV: str(Path(where).resolve())}
    shown = printable(where)
    if shown == where:
        return {CLASS_ENV: shown}
    secret = folder / "class-url"
    descriptor = os.open(secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(str(where))
    return {CLASS_ENV: shown, SECRET_ENV: str(secret)}


def taken_over(environ: dict[str, str]) -> str:
    """The class store that ``hand_over`` handed to this kernel."""
    secret = environ.get(SECRET_ENV)
    return Path(secret).read_text() if secret else environ[CLASS_ENV]


class Progress(ABC):
    """A class's progress records and the teacher's resets, the teacher's (``student`` None) or one student's.

    A student's records serve that student only: ``record`` and ``resets`` of another student, ``students`` and
    ``reset`` are refused (``Denied``). The teacher's list names each record by where it is kept (its file, its
    row), never by what the record says of itself.
    """

    def __init__(self, student: str | None) -> None:
        self.student = student

    def _own(self, student: str) -> None:
        if self.student is not None and student != self.student:
            raise Denied(f"a student's page keeps its own records only, not {student!r}'s")

    def _teachers(self, what: str) -> None:
        if self.student is not None:
            raise Denied(f"only the teacher's page {what}")

    def record(self, student: str, progress: dict) -> None:
        """Write ``student``'s progress record."""
        self._own(student)
        self._record(student, progress)

    def resets(self, student: str) -> int:
        """How many resets the teacher asked of ``student`` (theirs and the class's)."""
        self._own(student)
        return self._resets(student)

    def students(self) -> list[dict]:
        """Every student's record, in the order they joined (the teacher's)."""
        self._teachers("reads the class's records")
        records = [{**record, "student": student} for student, record in self._records() if isinstance(record, dict)]
        return sorted(records, key=lambda record: record.get("joined") or 0)

    def reset(self, student: str | None = None) -> None:
        """Ask ``student`` (None: every student) to start the lesson again (the teacher's)."""
        self._teachers("resets a student")
        self._reset(student)

    @abstractmethod
    def _record(self, student: str, progress: dict) -> None: ...

    @abstractmethod
    def _resets(self, student: str) -> int: ...

    @abstractmethod
    def _records(self) -> list[tuple[str, object]]: ...

    @abstractmethod
    def _reset(self, student: str | None) -> None: ...

    @abstractmethod
    def close(self) -> None:
        """Let go of what the records hold open."""


class _FolderProgress(Progress):
    """Records as files: ``progress/STUDENT.json``, and ``resets/STUDENT`` or ``resets/class`` counters."""

    def __init__(self, folder: Path, student: str | None) -> None:
        super().__init__(student)
        self.folder = folder
        for part in ("progress", "resets"):
            (folder / part).mkdir(parents=True, exist_ok=True)

    def _write(self, path: Path, data: object) -> None:
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(data))
        os.replace(partial, path)  # a reader sees the old record or the new one, never half of one

    def _record(self, student: str, progress: dict) -> None:
        self._write(self.folder / "progress" / f"{student}.json", progress)

    def _records(self) -> list[tuple[str, object]]:
        records = []
        for path in (self.folder / "progress").glob("*.json"):
            try:
                records.append((path.stem, json.loads(path.read_text())))
            except (OSError, ValueError):
                continue  # being replaced right now: read again on the next poll
        return records

    def _count(self, name: str) -> int:
        try:
            return int((self.folder / "resets" / name).read_text())
        except (OSError, ValueError):
            return 0

    def _resets(self, student: str) -> int:
        return sum(self._count(name) for name in (student, "class"))

    def _reset(self, student: str | None) -> None:
        name = "class" if student is None else student
        self._write(self.folder / "resets" / name, self._count(name) + 1)

    def close(self) -> None:
        """Nothing is held open between reads."""


class _PostgresProgress(Progress):
    """Records as rows of the store's database, under row-level security (``memlab.storage.postgres.progress``)."""

    def __init__(self, url: str, student: str | None) -> None:
        from memlab.storage.postgres.progress import PostgresProgress

        super().__init__(student)
        self.table = PostgresProgress(url, student=student)

    def _record(self, student: str, progress: dict) -> None:
        self.table.record(student, progress)

    def _records(self) -> list[tuple[str, object]]:
        return self.table.records()

    def _resets(self, student: str) -> int:
        return self.table.resets(student)

    def _reset(self, student: str | None) -> None:
        self.table.reset(student)

    def close(self) -> None:
        self.table.close()


class ClassStore:
    """A class store: a folder, or the owner's URL of a PostgreSQL database; what it opens, it closes.

    Attributes:
        where: the folder (a ``Path``) or the URL; postgres: whether it is a URL.

    Raises:
        InvalidArgument: ``where`` is a URL, but not a PostgreSQL one.
        SchemaError: (from ``store`` and ``progress``) the database cannot be reached or opened as a store.
    """

    def __init__(self, where: str | Path) -> None:
        self.postgres = is_postgres_url(str(where))
        if not self.postgres and "://" in str(where):  # a typo'd URL would become a folder named after it
            raise InvalidArgument(f"a class store is a folder or a postgresql:// URL, not {printable(where)}")
        self.where = str(where) if self.postgres else Path(where)
        self._opened: list[MemoryStore | Progress] = []

    def store(self, *, pool_size: int | None = None) -> MemoryStore:
        """The class's store, shared by every page (a new folder's made); on PostgreSQL with ``pool_size``
        session connections at most (a student's page: one)."""
        if self.postgres and pool_size is not None:
            from memlab.storage.postgres import PostgresStorage

            store = MemoryStore(storage=PostgresStorage(self.where, pool_size=pool_size))
        elif self.postgres:
            store = MemoryStore(self.where)
        else:
            self.where.mkdir(parents=True, exist_ok=True)
            store = MemoryStore(self.where / "store")
        self._opened.append(store)
        return store

    def progress(self, student: str | None = None) -> Progress:
        """The class's records: the teacher's (None) or ``student``'s own, which on PostgreSQL hold one of the
        class's seats (``TEACHER_CONNECTIONS`` are kept for the teacher, ``STUDENT_CONNECTIONS`` a page).

        Raises:
            ClassFull: on PostgreSQL, every seat is taken (nothing is held open then).
        """
        records = _PostgresProgress(self.where, student) if self.postgres else _FolderProgress(self.where, student)
        if self.postgres and student is not None:
            if records.table.take_seat(reserved=TEACHER_CONNECTIONS, each=STUDENT_CONNECTIONS) is None:
                records.close()
                raise ClassFull("The class is full: every seat its database has connections for is taken.")
        self._opened.append(records)
        return records

    def close(self) -> None:
        """Close every store and record this class store opened."""
        while self._opened:
            self._opened.pop().close()

    def __enter__(self) -> ClassStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
