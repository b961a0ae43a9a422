"""A link planted in an output folder (or a cache or data root another person can write to) is never written
through: every place pragmeter writes a file either writes a new temporary file renamed into place (a link at the
name is replaced, not followed) or opens the name through pragmeter.io.nofollow. The first test walks every writer
in the source and fails on a new one that does neither; the others plant links at the names the in-place writers
use (the LLM response cache of ``eval``/``generate``/``generation-check``, the embedding cache, a model folder's
files, a packaged file's checksum marker) and check the victim is untouched."""

from __future__ import annotations

import ast
import hashlib
import logging
import os
from pathlib import Path

import pytest

from pragmeter.io.nofollow import PlantedFile, folder_fd, open_nofollow

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "pragmeter"
VICTIM = b"someone else's file\n"

# Calls that write a file, and which argument names it (None: the object the method is called on).
WRITERS = {"open": 0, "write_text": None, "write_bytes": None, "save_file": 1, "to_csv": 0, "to_parquet": 0,
           "to_json": 0, "save": 1, "copy": 1, "copy2": 1, "copyfile": 1, "copytree": 1, "connect": 0,
           "save_pretrained": 0}
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
# Context managers and callbacks whose name is a new file or folder of pragmeter's own (mkstemp, mkdir of a random
# name): what is written under it cannot be a planted link.
FRESH = {"atomic_path", "staged_folder", "TemporaryDirectory", "NamedTemporaryFile"}
FRESH_PARAMETERS = {"staging"}  # the folder replace_folder / build_folder hand to their ``write`` callback
# Writers that are neither, with why they are safe.
EXEMPT = {
    ("cli/__init__.py", "os.open(os.devnull"): "opens os.devnull",
    ("testing/fake_gguf_server.py", "open(flag"): "a test double writing where its test tells it",
    ("testing/fake_gguf_server.py", "open(script['request_log']"): "a test double writing where its test tells it",
    ("testing/tiny_nli.py", "BertForSequenceClassification(config)"): "a test model written where its test tells it",
    ("testing/tiny_nli.py", "tokenizer.save_pretrained(path"): "a test model written where its test tells it",
    ("interpreter/recheck.py", "copy.copy(classifier"): "copies an object in memory, writes no file",
    ("encoders/embedding_cache.py", "sqlite3.connect(self.path"): "refuse_planted checks the database and its "
                                                                    "journals first (SQLite cannot be told O_NOFOLLOW)",
}
HELPERS = {"io/nofollow.py", "io/lock.py", "io/atomic.py"}  # the homes of the nofollow, lock and atomic opens


def _root(node: ast.AST) -> str | None:
    """The name a path expression is built on: ``staging / "a" / b`` -> staging, ``str(tmp)`` -> tmp."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.BinOp):
            node = node.left
        elif isinstance(node, ast.Call) and node.args and ast.unparse(node.func) in ("str", "Path", "os.fspath"):
            node = node.args[0]
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return None


def _fresh_names(function: ast.AST) -> set[str]:
    """Names bound in ``function`` to a fresh file or folder: ``with atomic_path(...) as tmp``, a ``staging``
    parameter, and names built on those (``joined = Path(tmp) / "x"``)."""
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg) and node.arg in FRESH_PARAMETERS:
            names.add(node.arg)
        if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            called = node.context_expr.func if isinstance(node.context_expr, ast.Call) else None
            if called is not None and ast.unparse(called).rsplit(".", 1)[-1] in FRESH:
                names.add(node.optional_vars.id)
    for _ in range(3):
        for node in ast.walk(function):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and _root(node.value) in names):
                names.add(node.targets[0].id)
    return names


def _writes(call: ast.Call) -> ast.AST | None:
    """The expression naming the file ``call`` writes, or None when it writes none."""
    name = ast.unparse(call.func).rsplit(".", 1)[-1]
    text = ast.unparse(call.func)
    if text == "os.open":
        given = call.args[1] if len(call.args) > 1 else ast.Constant(0)
        flags = {node.attr for node in ast.walk(given) if isinstance(node, ast.Attribute)}
        return call.args[0] if flags & WRITE_FLAGS else None
    if name not in WRITERS or (name == "connect" and not text.startswith("sqlite3")):
        return None
    if name == "open":  # open(path, mode) or path.open(mode)
        position = 1 if text == "open" else 0
        mode = (call.args[position] if len(call.args) > position
                else next((k.value for k in call.keywords if k.arg == "mode"), None))
        modes = [node.value for node in ast.walk(mode) if isinstance(node, ast.Constant)] if mode else []
        if not any(isinstance(m, str) and set(m) & set("wax+") for m in modes):  # "ab" if have else "wb" too
            return None
        return call.args[0] if text == "open" else call.func.value
    if name in ("save", "to_json") and not call.args:
        return None  # a method of our own (Profile.to_json, a classifier's save(folder, …) writing a staged folder)
    position = WRITERS[name]
    if position is None:
        return call.func.value if isinstance(call.func, ast.Attribute) else None
    if name in ("save", "save_file") and text not in ("save_file", "torch.save", "np.save"):
        return None  # a method of ours (checkpoints.save, model.save): its own writes are walked where they are
    arguments = call.args
    return arguments[position] if len(arguments) > position else (arguments[0] if arguments else None)


def unsafe_writers() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in HELPERS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for function in functions:
            fresh = _fresh_names(function)
            for call in (node for node in ast.walk(function) if isinstance(node, ast.Call)):
                target = _writes(call)
                if target is None or _root(target) in fresh:
                    continue
                shown = ast.unparse(call)
                if any(relative == file and shown.startswith(start) for file, start in EXEMPT):
                    continue
                found.append(f"{relative}:{call.lineno}: {shown[:90]}")
    return sorted(set(found))


def test_every_writer_writes_a_fresh_temporary_or_opens_without_following_links():
    """New writer here? Write through pragmeter.io.atomic (atomic_path, staged_folder) or open the name with
    pragmeter.io.nofollow.open_nofollow."""
    assert unsafe_writers() == []


def test_the_walk_finds_a_writer_through_a_name(tmp_path, monkeypatch):
    """The walk itself: an in-place open of a name in an output folder is reported."""
    module = PACKAGE / "eval" / "_walk_probe.py"
    monkeypatch.setattr(Path, "rglob", lambda self, pattern: iter([module]))
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: (
        "def f(output):\n    with open(output / 'log.txt', 'a') as h:\n        h.write('x')\n"
        "def g(output):\n    (output / 'card.md').write_text('x')\n"
        "def h(output):\n    with atomic_path(output / 'a.json') as tmp:\n        tmp.write_text('x')\n"))
    assert unsafe_writers() == ["eval/_walk_probe.py:2: open(output / 'log.txt', 'a')",
                                "eval/_walk_probe.py:5: (output / 'card.md').write_text('x')"]


# ---------------------------------------------------------------- the helper


@pytest.fixture
def victim(tmp_path) -> Path:
    path = tmp_path / "victim.txt"
    path.write_bytes(VICTIM)
    return path


@pytest.mark.parametrize("append", [False, True])
def test_open_nofollow_refuses_a_link_a_fifo_a_folder_and_a_hard_link(tmp_path, victim, append):
    (tmp_path / "link").symlink_to(victim)
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    os.link(victim, tmp_path / "second-name")
    for name, what in [("link", "a symbolic link"), ("fifo", "not a regular file"), ("folder", "not a regular file"),
                       ("second-name", "a file with 2 hard links")]:
        with pytest.raises(PlantedFile, match=f"{name}: {what}; nothing is written through it"):
            open_nofollow(tmp_path / name, append=append)
    assert victim.read_bytes() == VICTIM
    fd = open_nofollow(tmp_path / "new", append=append)
    os.write(fd, b"ours")
    os.close(fd)
    assert (tmp_path / "new").read_bytes() == b"ours"


def test_a_refused_file_is_not_emptied_and_an_unwritable_one_is_an_os_error(tmp_path, victim):
    os.link(victim, tmp_path / "second-name")
    with pytest.raises(PlantedFile):
        open_nofollow(tmp_path / "second-name")  # would truncate: it must not
    assert victim.read_bytes() == VICTIM
    if os.geteuid() != 0:
        victim.chmod(0o444)
        with pytest.raises(PermissionError):
            open_nofollow(victim)


def test_folder_fd_refuses_a_link_on_the_way(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "root" / "a").mkdir(parents=True)
    (tmp_path / "root" / "a" / "b").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(PlantedFile, match=r"root/a/b: a symbolic link"):
        folder_fd(tmp_path / "root", "a/b/c")
    assert list(elsewhere.iterdir()) == []
    os.close(folder_fd(tmp_path / "root", "a/new/deeper"))
    assert (tmp_path / "root" / "a" / "new" / "deeper").is_dir()


# ---------------------------------------------------------------- the in-place writers


@pytest.mark.parametrize("plant", ["symlink", "hardlink", "fifo"])
def test_the_response_cache_is_never_appended_through_a_planted_file(tmp_path, victim, plant):
    from pragmeter.llm.cache import ResponseCache

    path = tmp_path / "runs" / "v" / "cache" / "responses.jsonl"
    path.parent.mkdir(parents=True)
    {"symlink": lambda: path.symlink_to(victim), "hardlink": lambda: os.link(victim, path),
     "fifo": lambda: os.mkfifo(path)}[plant]()
    with pytest.raises(PlantedFile, match=r"responses\.jsonl: .*; nothing is written through it"):
        ResponseCache(path)
    assert victim.read_bytes() == VICTIM


def test_the_response_cache_still_reads_and_appends_its_own_file(tmp_path, caplog):
    from pragmeter.llm.cache import ResponseCache

    path = tmp_path / "responses.jsonl"
    first = ResponseCache(path)
    first.put("a", {"text": "one", "finish_reason": "stop"})
    first.close()
    with path.open("ab") as handle:
        handle.write(b'{"key": "torn"')  # a killed run's last line
    again = ResponseCache(path)
    again.put("b", {"text": "two", "finish_reason": "stop"})
    again.close()
    assert [ResponseCache(path).get(k)["text"] for k in "ab"] == ["one", "two"]
    if os.geteuid() != 0:  # a read-only cache is still read, with one warning
        path.chmod(0o444)
        with caplog.at_level(logging.WARNING, logger="pragmeter"):
            assert ResponseCache(path).get("b")["text"] == "two"
        assert "cannot be written" in caplog.text


def test_the_embedding_cache_refuses_a_planted_database_link(tmp_path, victim):
    from pragmeter.encoders.embedding_cache import DB_FILE, EmbeddingCache

    folder = tmp_path / "embeddings" / "enc"
    folder.mkdir(parents=True)
    (folder / DB_FILE).symlink_to(victim)
    with pytest.raises(PlantedFile, match=f"{DB_FILE}: a symbolic link"):
        EmbeddingCache(tmp_path / "embeddings", "enc")
    assert victim.read_bytes() == VICTIM


def test_a_model_folder_saved_over_planted_links_replaces_them(tmp_path, victim):
    from pragmeter import ImpScore
    from pragmeter.impscore.model import CARD_FILE, CONFIG_FILE, DEFAULT_MODEL

    folder = tmp_path / "copy"
    folder.mkdir()
    for name in (CONFIG_FILE, CARD_FILE):
        (folder / name).symlink_to(victim)
    ImpScore.load(DEFAULT_MODEL).save(folder, card="a card\n")
    assert victim.read_bytes() == VICTIM
    assert not (folder / CONFIG_FILE).is_symlink() and (folder / CARD_FILE).read_text() == "a card\n"


def test_a_packaged_files_checksum_marker_is_not_written_through_a_link(tmp_path, victim):
    from pragmeter.llm.packaged import verified

    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights")
    Path(f"{model}.sha256").symlink_to(victim)
    assert verified(model, 7, hashlib.sha256(b"weights").hexdigest())
    assert victim.read_bytes() == VICTIM and not Path(f"{model}.sha256").is_symlink()
