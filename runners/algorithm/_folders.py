"""Checkpoint folders on disk: complete or absent, whatever the moment of a crash.

A save into a folder that does not exist yet writes the file into a temporary sibling
(``.<name>.tmp-<8 hex digits>``), syncs the file and the sibling, renames the sibling into
place (one atomic ``rename`` on POSIX) and syncs the parent. A kill at any moment leaves
either no ``<name>`` or a complete one, plus at most a stale sibling, which listings ignore
(``list_checkpoints``: its name starts with a dot) and the next save in that parent
removes. A save into a folder that exists (``save_to_path`` twice into one path) replaces
the file in it the same way: a temporary file, synced, renamed over the old one, the
folder synced; the folder holds the old checkpoint or the new one.

Each phase calls ``reach_save_phase`` (``backends/_injection.py``), so that tests and
``bench/checkpoint_soak.py`` kill a save at an aimed moment through ``HOOKBUS_FAULT_PLAN``.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path

from ..backends._injection import reach_save_phase

__all__ = ("is_temporary", "list_checkpoints", "write_folder")

_TMP_FILE = re.compile(r"\.tmp-[a-z0-9_]{8}\.msgpack")  # tempfile.mkstemp's names, ours
_TMP_FOLDER = re.compile(r"\..+\.tmp-[0-9a-f]{8}")  # _new_folder's names
_NUMBERED = re.compile(r"checkpoint_(\d+)")


def is_temporary(name: str) -> bool:
    """Tell whether ``name`` is one a save gives its temporary folder (never a checkpoint)."""
    return _TMP_FOLDER.fullmatch(name) is not None


def write_folder(directory: Path, name: str, data: bytes) -> None:
    """Make folder ``directory`` hold file ``name`` with ``data``: all of it, or nothing new.

    Then remove what killed saves left: temporary files inside ``directory``, temporary
    folders beside it (those holding nothing but a save's files).
    """
    if directory.is_dir():
        _replace_file(directory, name, data)
    else:
        _new_folder(directory, name, data)
    _remove_stale(directory, name)


def _new_folder(directory: Path, name: str, data: bytes) -> None:
    parent = directory.parent
    parent.mkdir(parents=True, exist_ok=True)
    # os.mkdir, not tempfile.mkdtemp: the checkpoint keeps the umask's permissions, not 0700.
    temp = parent / f".{directory.name}.tmp-{secrets.token_hex(4)}"
    os.mkdir(temp)
    try:
        reach_save_phase("begun")
        _write_synced(temp / name, data)
        _fsync_folder(temp)
        reach_save_phase("synced")
        os.rename(temp, directory)  # atomic; fails if a non-empty folder appeared meanwhile
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    reach_save_phase("renamed")
    _fsync_folder(parent)  # the rename itself survives a power cut


def _replace_file(directory: Path, name: str, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".msgpack")
    os.close(fd)
    try:
        reach_save_phase("begun")
        _write_synced(Path(tmp), data)
        reach_save_phase("synced")
        os.replace(tmp, directory / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    reach_save_phase("renamed")
    _fsync_folder(directory)


def _write_synced(file: Path, data: bytes) -> None:
    with open(file, "wb") as out:
        out.write(data)
        out.flush()
        reach_save_phase("written")
        os.fsync(out.fileno())


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_stale(directory: Path, name: str) -> None:
    with os.scandir(directory) as entries:
        stray = [
            e.path
            for e in entries
            if _TMP_FILE.fullmatch(e.name) and e.is_file(follow_symlinks=False)
        ]
    for path in stray:
        Path(path).unlink(missing_ok=True)  # another cleaner may be faster
    with os.scandir(directory.parent) as entries:
        folders = [
            e.path for e in entries if is_temporary(e.name) and e.is_dir(follow_symlinks=False)
        ]
    for folder in folders:
        # Only what a save writes: a user's own folder of that name is left alone.
        if all(n == name or _TMP_FILE.fullmatch(n) for n in os.listdir(folder)):
            shutil.rmtree(folder, ignore_errors=True)


def list_checkpoints(logdir: str | os.PathLike[str], name: str) -> list[Path]:
    """Return the complete checkpoints in run directory ``logdir``, oldest first.

    A checkpoint is a folder ``checkpoint_<N>`` holding file ``name``, ordered by N;
    temporary folders of saves in progress or killed are never listed.
    """
    found: list[tuple[int, Path]] = []
    with os.scandir(logdir) as entries:
        for entry in entries:
            match = _NUMBERED.fullmatch(entry.name)
            if match and entry.is_dir() and os.path.isfile(os.path.join(entry.path, name)):
                found.append((int(match[1]), Path(entry.path)))
    return [path for _, path in sorted(found)]
