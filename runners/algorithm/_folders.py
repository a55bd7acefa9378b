"""Checkpoint folders on disk: complete or absent, whatever the moment of a crash.

A save into a folder that does not exist yet writes the file into a temporary sibling
(``.<name>.tmp-<writer>-<8 hex digits>``), syncs the file and the sibling, renames the
sibling into place (one atomic ``rename`` on POSIX) and syncs the parent. A kill at any
moment leaves either no ``<name>`` or a complete one, plus at most a stale sibling, which
listings ignore (``list_checkpoints``: its name starts with a dot) and a later save in that
parent removes. A save into a folder that exists (``save_to_path`` twice into one path)
replaces the file in it the same way: a temporary file (``.tmp-<writer>-<8 hex
digits>.msgpack``), synced, renamed over the old one, the folder synced; the folder holds
the old checkpoint or the new one.

A save may add files in sub-folders (the modules' own files, ``_module_files``), ``extra``:
into a new folder they go with the checkpoint file, in the one rename; into an existing
one each is replaced the same way as the checkpoint file, before it, and the files of that
tree the save did not write (a module removed since) are deleted. The checkpoint file,
written last, is what makes a checkpoint; the extra files are each complete or absent.

Several processes may save into one parent at once (two runs sharing a logdir's parent,
Tune trials on shared storage). A temporary name carries its writer (``<writer>`` is
``<host tag>-<pid>``), and a save removes only temporaries whose writer is provably dead:
written on this host by a process that no longer exists. Another live writer's temporary,
one from another host, or one named by an older hookbus is left alone (listings still
ignore it). A checkpoint folder that is a symbolic link is refused, never written through,
and nothing under it is reached through a link: a linked sub-folder is refused before
anything is written, a linked file replaced or deleted as the link itself (``_tree``).

Each phase calls ``backends.reach_save_phase`` (fault plans: ``backends/_injection.py``), so
that tests and ``bench/checkpoint_soak.py`` kill a save at an aimed moment through
``HOOKBUS_FAULT_PLAN``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import socket
from collections.abc import Mapping
from pathlib import Path

from hookbus.kernel import ConfigError

from ..backends import reach_save_phase
from ._tree import Tree, check_tree, fsync_folder, open_folder, plan_tree, prune_tree, write_tree

__all__ = ("is_temporary", "list_checkpoints", "write_folder")

# Who writes a temporary: this host (a short digest of its name, so that any hostname
# makes a plain file name) and this process. Both are fixed per process but for a fork,
# hence computed per save from os.getpid().
_HOST = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]
_WRITER = r"(?P<host>[0-9a-f]{6})-(?P<pid>[0-9]+)"
_TMP_FILE = re.compile(rf"\.tmp-{_WRITER}-[0-9a-f]{{8}}\.msgpack")
_TMP_FOLDER = re.compile(rf"\..+\.tmp-{_WRITER}-[0-9a-f]{{8}}")
# Names of hookbus before the writer was in them: still never listed, never removed.
_OLD_TMP_FOLDER = re.compile(r"\..+\.tmp-[0-9a-f]{8}")
_NUMBERED = re.compile(r"checkpoint_(\d+)")


def is_temporary(name: str) -> bool:
    """Tell whether ``name`` is one a save gives its temporary folder (never a checkpoint)."""
    return _TMP_FOLDER.fullmatch(name) is not None or _OLD_TMP_FOLDER.fullmatch(name) is not None


def write_folder(
    directory: Path, name: str, data: bytes, extra: Mapping[str, bytes] | None = None
) -> None:
    """Make folder ``directory`` hold file ``name`` with ``data``: all of it, or nothing new.

    ``extra`` maps relative paths in sub-folders (``a/b/file``) to more files' bytes; the
    sub-folders they start with belong to the save (see above). Then remove what killed
    saves left: temporary files inside ``directory``, temporary folders beside it (those
    holding nothing but a save's files), when their writer is provably dead. ConfigError
    if ``directory`` is a symbolic link, or holds one where the save writes a folder
    (``_tree``), before anything is written.
    """
    if directory.is_symlink():
        raise ConfigError(
            f"cannot save a checkpoint into {str(directory)!r}: it is a symbolic link (to "
            f"{os.readlink(directory)!r}), and checkpoints are written only into real "
            f"folders; save into the link's target, or remove the link"
        )
    tree = plan_tree(extra or {})
    if directory.is_dir() or not _new_folder(directory, name, data, tree):
        with open_folder(directory) as root:
            _replace_tree(root, directory, tree)
            _replace_file(root, name, data)
    with open_folder(directory) as root:
        _remove_stale(root, directory, {name, *tree})


def _temporary_suffix() -> str:
    return f"tmp-{_HOST}-{os.getpid()}-{secrets.token_hex(4)}"


def _new_folder(directory: Path, name: str, data: bytes, tree: Tree) -> bool:
    """Write a new folder ``directory``; return False if another writer made it first."""
    parent = directory.parent
    parent.mkdir(parents=True, exist_ok=True)
    # os.mkdir, not tempfile.mkdtemp: the checkpoint keeps the umask's permissions, not 0700.
    temp = parent / f".{directory.name}.{_temporary_suffix()}"
    os.mkdir(temp)
    try:
        reach_save_phase("begun")
        with open_folder(temp) as root:
            write_tree(root, tree, temp, _write_new, write_syncs=False)
            _write_synced(root, name, data)
            fsync_folder(root)
        reach_save_phase("synced")
        os.rename(temp, directory)  # atomic; fails if a non-empty folder appeared meanwhile
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        if directory.is_dir() and not directory.is_symlink():
            return False  # a concurrent save of the same path won: replace its file
        raise
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    reach_save_phase("renamed")
    _fsync_path(parent)  # the rename itself survives a power cut
    return True


def _write_new(folder: int, name: str, data: bytes) -> None:
    """Write a file of a new folder's tree (no phases: the checkpoint file reports them)."""
    _write_synced(folder, name, data, phases=False)


def _replace_tree(root: int, directory: Path, tree: Tree) -> None:
    """Replace the files of ``tree`` in the existing folder ``directory`` (descriptor
    ``root``), each by rename; then delete the files of its sub-folders this save did not
    write, and folders left empty. Links where it writes folders are refused first."""
    check_tree(root, tree, directory)
    write_tree(root, tree, directory, _replace_extra, write_syncs=True)
    for top, node in tree.items():
        if isinstance(node, dict):
            with open_folder(directory / top, top, root) as folder:
                prune_tree(folder, node, _is_live_temporary)


def _is_live_temporary(name: str) -> bool:
    """Tell whether ``name`` is a temporary file of a save that may still be running."""
    found = _TMP_FILE.fullmatch(name)
    return found is not None and not _writer_is_dead(found)


def _replace_extra(folder: int, name: str, data: bytes) -> None:
    _replace_file(folder, name, data, phases=False)


def _replace_file(folder: int, name: str, data: bytes, *, phases: bool = True) -> None:
    """Replace file ``name`` in the folder of descriptor ``folder`` by rename (a link there
    is replaced, never followed); ``phases``: report the save's phases (the checkpoint
    file does; the extra files are written before them)."""
    reach = reach_save_phase if phases else _no_phase
    tmp = f".{_temporary_suffix()}.msgpack"
    try:
        reach("begun")
        _write_synced(folder, tmp, data, phases=phases)
        reach("synced")
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=folder)
        raise
    reach("renamed")
    fsync_folder(folder)


def _no_phase(phase: str) -> None:
    """Report nothing: a file written before the checkpoint file's phases."""


def _write_synced(folder: int, name: str, data: bytes, *, phases: bool = True) -> None:
    # A new file with the umask's permissions, as a new folder's (tempfile's are 0600);
    # O_EXCL (which also refuses a link there): a name is never shared with another writer.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(name, flags, 0o666, dir_fd=folder)
    with open(fd, "wb") as out:
        out.write(data)
        out.flush()
        if phases:
            reach_save_phase("written")
        os.fsync(out.fileno())


def _fsync_path(folder: Path) -> None:
    with open_folder(folder) as fd:
        fsync_folder(fd)


def _writer_is_dead(match: re.Match[str]) -> bool:
    """Tell whether the writer a temporary's name records is provably gone."""
    if match["host"] != _HOST:
        return False  # another machine's process: nothing here can tell
    pid = int(match["pid"])
    if pid == os.getpid():
        return False  # this process's own saves clean up after themselves, or are running
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # another user's live process, or no pid at all
    return False


def _remove_stale(root: int, directory: Path, save_names: set[str]) -> None:
    with os.scandir(root) as entries:
        stray = [
            e.name
            for e in entries
            if (found := _TMP_FILE.fullmatch(e.name))
            and e.is_file(follow_symlinks=False)
            and _writer_is_dead(found)
        ]
    for name in stray:
        with contextlib.suppress(FileNotFoundError):  # another cleaner may be faster
            os.unlink(name, dir_fd=root)
    with os.scandir(directory.parent) as entries:
        folders = [
            e.path
            for e in entries
            if (found := _TMP_FOLDER.fullmatch(e.name))
            and e.is_dir(follow_symlinks=False)
            and _writer_is_dead(found)
        ]
    for folder in folders:
        # Only what a save writes: a user's own folder of that name is left alone.
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            continue  # another cleaner was faster
        if all(n in save_names or _TMP_FILE.fullmatch(n) for n in names):
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
