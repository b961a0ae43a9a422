"""On-disk cache of sentence embeddings keyed by encoder and text.

Training re-uses embeddings across epochs and runs (the frozen encoder runs once per distinct text), and scoring
jobs can re-use them across runs. Layout: ``<root>/<encoder>/embeddings.sqlite``, one SQLite database (WAL mode)
with a row per text: the sha256 of the text (:func:`pragmeter.text.text_hash`), its float32 vector and a checksum of
the two. A cache may be shared, so a row is checked on every read: a vector copied from another text's row (the
checksum binds it to its own text's hash), of another length, or holding NaN or infinity is dropped and computed
again. A job reads only the rows it asks for, so its
memory does not grow with the cache; new rows are committed chunk by chunk, so an interrupted encoding keeps every
finished chunk, and several processes may share the cache.

The cache never stops a job: a corrupt database is set aside (warned once) and rebuilt, a cache that cannot be
written (read-only folder, full disk) is warned about once and the job goes on computing what it needs.
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from pragmeter.errors import PragmeterError
from pragmeter.io.nofollow import refuse_planted

log = logging.getLogger("pragmeter")

DB_FILE = "embeddings.sqlite"
_LOOKUP_CHUNK = 500  # keys per SELECT (SQLite allows 32766 variables; small chunks keep statements cheap)


def text_key(text: str) -> bytes:
    """A row's key: the sha256 of the text's UTF-8 bytes."""
    from pragmeter.text import text_hash

    return bytes.fromhex(text_hash(text))


def row_checksum(key: bytes, vector: bytes) -> bytes:
    """What binds a stored vector to its text's key: a vector moved to another text's row no longer matches."""
    return hashlib.sha256(key + vector).digest()[:16]


class EmbeddingCache:
    """``width``: the length of every vector, when the caller knows it; a stored row of another length, one holding
    NaN or infinite values, or one whose checksum is not its own text's (a damaged, tampered or copied row) is dropped
    and computed again."""

    def __init__(self, root: str | Path, encoder: str, width: int | None = None) -> None:
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", encoder)
        self.width = width
        self.folder = Path(root) / safe
        self.path = self.folder / DB_FILE
        self._lock = threading.Lock()  # one connection, used from the caller's and worker threads
        self._db: sqlite3.Connection | None = None
        self._writable = True
        self._warned: set[str] = set()
        self._open()

    # ---------------------------------------------------------------- opening, failures
    def _warn(self, kind: str, message: str) -> None:
        if kind not in self._warned:  # once per kind and cache, not once per chunk
            self._warned.add(kind)
            log.warning("embedding cache %s: %s", self.path, message)

    def _connect(self) -> sqlite3.Connection:
        refuse_planted(self.path, *(Path(f"{self.path}{suffix}") for suffix in ("-wal", "-shm", "-journal")))
        db = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
        try:
            # Pages large enough for several 1.5 kB vectors each (set before the file is created; else ignored).
            db.execute("PRAGMA page_size=16384")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a crash loses at most the last commit
            # Rows are appended in rowid order (fast writes); the small UNIQUE index on the sha1 finds them.
            db.execute("CREATE TABLE IF NOT EXISTS embeddings (key BLOB NOT NULL UNIQUE, vector BLOB NOT NULL, "
                       "checksum BLOB)")
            if "checksum" not in {row[1] for row in db.execute("PRAGMA table_info(embeddings)")}:
                try:  # a cache written before rows had checksums: its rows are never read (keys were sha1)
                    db.execute("ALTER TABLE embeddings ADD COLUMN checksum BLOB")
                except sqlite3.OperationalError as error:
                    if "duplicate column" not in str(error):  # another process added it first
                        raise
            db.execute("SELECT key, checksum FROM embeddings LIMIT 1").fetchall()
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _open(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._db = self._connect()
        except sqlite3.DatabaseError as error:
            if _is_corrupt(error) and self._set_aside(error):
                try:
                    self._db = self._connect()
                except (sqlite3.Error, OSError) as again:
                    self._unusable(again)
            else:
                self._unusable(error)
        except OSError as error:
            self._unusable(error)

    def _set_aside(self, error: Exception) -> bool:
        """Move a corrupt database out of the way (kept for inspection) so a fresh one can be built."""
        from pragmeter.io.atomic import set_aside

        try:
            aside = set_aside(self.path)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        except OSError:
            return False
        if aside is None:
            return False
        self._warn("corrupt", f"corrupt ({error}); moved to {aside.name} and rebuilt")
        return True

    def _unusable(self, error: Exception) -> None:
        self._warn("unusable", f"cannot be used ({error}); going on without the cache")
        if self._db is not None:
            self._db.close()
        self._db = None

    def _failed(self, error: sqlite3.Error, writing: bool) -> None:
        """A failure in the middle of a job: stop writing (full disk, read-only) or stop using the cache."""
        if _is_corrupt(error):  # found corrupt pages only now: start over with an empty cache
            self._db.close()
            self._db = None
            if self._set_aside(error):
                try:
                    self._db = self._connect()
                    return
                except (sqlite3.Error, OSError) as again:
                    error = again
            self._unusable(error)
        elif writing:
            self._writable = False
            self._warn("write", f"cannot be written ({error}); going on without storing new embeddings")
        else:
            self._unusable(error)

    # ---------------------------------------------------------------- reading and writing
    def _lookup(self, keys: Sequence[bytes]) -> dict[bytes, tuple[bytes, bytes]]:
        """The stored (vector, checksum) of each of ``keys`` there is a row for."""
        if self._db is None:
            return {}
        found: dict[bytes, tuple[bytes, bytes]] = {}
        try:
            with self._lock:
                for start in range(0, len(keys), _LOOKUP_CHUNK):
                    chunk = keys[start: start + _LOOKUP_CHUNK]
                    rows = self._db.execute(f"SELECT key, vector, checksum FROM embeddings WHERE key IN "
                                            f"({','.join('?' * len(chunk))})", chunk)
                    found.update((key, (vector, checksum)) for key, vector, checksum in rows)
        except sqlite3.Error as error:
            self._failed(error, writing=False)
            return {}
        return found

    def _store(self, keys: Iterable[bytes], vectors: np.ndarray) -> None:
        if self._db is None or not self._writable:
            return
        blobs = ((key, np.ascontiguousarray(vector, dtype=np.float32).tobytes()) for key, vector in zip(keys, vectors))
        rows = ((key, blob, row_checksum(key, blob)) for key, blob in blobs)
        try:
            with self._lock:
                self._db.execute("BEGIN")
                try:
                    self._db.executemany("INSERT OR IGNORE INTO embeddings (key, vector, checksum) VALUES (?, ?, ?)",
                                         rows)
                    self._db.execute("COMMIT")
                except BaseException:
                    # SQLite rolls back by itself on some errors (a full disk): a second ROLLBACK would then raise
                    # "no transaction is active" and hide the error that says what happened.
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
        except sqlite3.Error as error:
            self._failed(error, writing=True)

    def _vector(self, key: bytes, blob, checksum) -> np.ndarray | None:
        """A stored row as a vector; None for a damaged one (a checksum that is not this key's and vector's, a length
        that is not whole floats or not ``width``, NaN or infinite values)."""
        if not isinstance(blob, bytes) or not blob or len(blob) % 4:
            return None
        if checksum != row_checksum(key, blob):  # another text's row, copied here, or a vector changed in place
            return None
        vector = np.frombuffer(blob, dtype=np.float32)
        if (self.width is not None and len(vector) != self.width) or not np.isfinite(vector).all():
            return None
        return vector

    def _drop(self, keys: list[bytes]) -> None:
        """Remove damaged rows (they are computed again and stored anew)."""
        self._warn("rows", f"{len(keys)} damaged row(s) (not their text's checksum, wrong length, NaN or infinite "
                           "values) dropped and computed again")
        if self._db is None or not self._writable:
            return
        try:
            with self._lock:
                for start in range(0, len(keys), _LOOKUP_CHUNK):
                    chunk = keys[start: start + _LOOKUP_CHUNK]
                    self._db.execute(f"DELETE FROM embeddings WHERE key IN ({','.join('?' * len(chunk))})", chunk)
        except sqlite3.Error as error:
            self._failed(error, writing=True)

    def __len__(self) -> int:
        if self._db is None:
            return 0
        try:
            with self._lock:
                return self._db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0]
        except sqlite3.Error as error:
            self._failed(error, writing=False)
            return 0

    def __contains__(self, text: str) -> bool:
        key = text_key(text)
        return key in self._lookup([key])

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def get_or_compute(
        self,
        texts: Sequence[str],
        encode: Callable[[list[str]], np.ndarray],
        chunk_size: int = 4096,
        progress: Callable[[int], None] | None = None,
    ) -> np.ndarray:
        """Embeddings of ``texts`` in order; missing ones are computed with ``encode`` in chunks and stored."""
        keys = [text_key(t) for t in texts]
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        unique = list(dict.fromkeys(keys))
        wanted = set(unique)
        found, damaged = {}, []
        for key, (blob, checksum) in self._lookup(unique).items():
            if key in wanted:
                vector = self._vector(key, blob, checksum)
                if vector is None:
                    damaged.append(key)
                else:
                    found[key] = vector
        if damaged:
            self._drop(damaged)
        text_of = dict(zip(keys, texts))
        todo = [key for key in unique if key not in found]
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start: start + chunk_size]
            vectors = np.asarray(encode([text_of[key] for key in chunk]), dtype=np.float32)
            finite = np.isfinite(vectors).all(axis=-1) if vectors.ndim == 2 else np.zeros(len(chunk), dtype=bool)
            # a non-finite vector is never stored: the caller refuses it, and a later run must compute it again
            self._store((key for key, ok in zip(chunk, finite) if ok), vectors[finite] if finite.any() else [])
            found.update(zip(chunk, vectors))
            if progress:
                progress(len(chunk))
        dims = {len(v) for v in found.values()}
        if len(dims) > 1:  # rows of another width: a cache written under this name by a different encoder
            raise PragmeterError(f"embedding cache {self.path} holds vectors of widths {sorted(dims)} (written by "
                                 "another encoder under this name); delete it")
        return np.stack([found[key] for key in keys])


def _is_corrupt(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    # A truncated file reads short: SQLite reports that as a disk I/O error.
    return any(s in text for s in ("not a database", "malformed", "corrupt", "file is encrypted", "disk i/o error"))


def attach_embedding_cache(model, root: str | Path | None = None):
    """Give an ImpScore ``model`` the on-disk embedding cache (default ``$PRAGMETER_CACHE/embeddings``, shared by
    every command that scores texts), in the part for what produces its numbers (``model.embedding_key()``: the
    encoder's content, backend and precision); returns the model."""
    from pragmeter.encoders.paths import embeddings_dir

    model.embedding_cache = EmbeddingCache(root if root is not None else embeddings_dir(), model.embedding_key(),
                                           width=model.heads_config.embedding_dim)
    return model
