"""A save's files under its checkpoint folder, reached through folder descriptors only.

Everything a save writes, replaces or deletes lies inside the checkpoint folder, whatever
that folder holds: a sub-folder that is a symbolic link (``learner_group`` linked to a
folder elsewhere, at any depth) would otherwise take the save's files into the link's
target and have the save delete that target's other files. So no path under the
checkpoint folder is ever resolved by name: the folder is opened once (``O_NOFOLLOW``),
and each sub-folder is opened from its parent's descriptor with ``O_NOFOLLOW``, files are
created (``O_EXCL | O_NOFOLLOW``), renamed, listed and deleted relative to those
descriptors (``openat``, ``renameat``, ``unlinkat``). What the save finds:

- a link where it writes a folder: refused with a ConfigError naming the link and its
  target, before anything is written (``check_tree``); a link planted after that check
  fails the descriptor's ``O_NOFOLLOW`` the same way;
- a link where it writes a file: replaced by the file, as any rename replaces a name (the
  link goes, its target is untouched);
- a link among the files it deletes (those of a module removed since): deleted as the
  link itself, never followed;
- a file where it writes a folder, a folder where it writes a file: refused likewise.

Each function takes ``where``, the path the descriptor was opened at, for messages only.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Union

from hookbus.kernel import ConfigError

__all__ = (
    "Tree",
    "check_tree",
    "fsync_folder",
    "open_folder",
    "plan_tree",
    "prune_tree",
    "write_tree",
)

Tree = dict[str, Union["Tree", bytes]]
"""Files by folder: a name maps to a file's bytes or to the tree of a sub-folder."""

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def plan_tree(extra: Mapping[str, bytes]) -> Tree:
    """Return the tree of ``extra`` (relative paths ``a/b/file`` to bytes).

    ConfigError for a path that is absolute, climbs (``..``) or is both a file and a
    folder: no name a module id makes may lead out of the checkpoint folder.
    """
    tree: Tree = {}
    for relative, content in extra.items():
        path = PurePosixPath(relative)
        if path.is_absolute() or not path.parts or ".." in path.parts:
            raise ConfigError(
                f"cannot save {relative!r} into a checkpoint: a file it holds is named by a "
                f"relative path inside it, without '..' (is a module id {relative!r}?)"
            )
        node = tree
        for part in path.parts[:-1]:
            sub = node.setdefault(part, {})
            if not isinstance(sub, dict):
                raise ConfigError(f"cannot save {relative!r}: {part!r} is also a file")
            node = sub
        if isinstance(node.get(path.name), dict):
            raise ConfigError(f"cannot save {relative!r}: {path.name!r} is also a folder")
        node[path.name] = content
    return tree


@contextlib.contextmanager
def open_folder(where: Path, name: str | None = None, parent: int | None = None) -> Iterator[int]:
    """Open folder ``where`` (or ``name`` in the folder of descriptor ``parent``), never
    through a link: ConfigError if it is one, or is not a folder."""
    try:
        fd = os.open(where if name is None else name, _FOLDER, dir_fd=parent)
    except OSError as exc:
        raise ConfigError(_not_a_folder(where, parent, name, exc)) from None
    try:
        yield fd
    finally:
        os.close(fd)


def check_tree(folder: int, tree: Tree, where: Path) -> None:
    """Refuse what stands where ``tree`` writes a folder, under ``folder``, unless it is
    missing or a real folder; and a folder where it writes a file."""
    for name, node in tree.items():
        try:
            mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue  # made by the save
        if isinstance(node, bytes):
            if stat.S_ISDIR(mode):
                raise ConfigError(
                    f"cannot save a checkpoint: {str(where / name)!r} is a folder where the "
                    f"save writes a file; remove it"
                )
            continue  # a file or a link to one: replaced by rename, never followed
        with open_folder(where / name, name, folder) as sub:
            check_tree(sub, node, where / name)


def write_tree(
    folder: int,
    tree: Tree,
    where: Path,
    write: Callable[[int, str, bytes], None],
    *,
    write_syncs: bool,
) -> None:
    """Write ``tree`` under ``folder``: each file by ``write(folder_fd, name, data)``,
    each sub-folder made if missing and opened without links.

    A folder is synced once its entries are made: when a sub-folder was made in it, or
    when it got files and ``write`` does not sync the folder itself (``write_syncs``: a
    replace by rename does).
    """
    changed = False
    for name, node in tree.items():
        if isinstance(node, bytes):
            write(folder, name, node)
            changed = changed or not write_syncs
            continue
        try:
            os.mkdir(name, 0o777, dir_fd=folder)  # the umask's permissions, as a new folder's
            changed = True
        except FileExistsError:
            pass
        with open_folder(where / name, name, folder) as sub:
            write_tree(sub, node, where / name, write, write_syncs=write_syncs)
    if changed:
        fsync_folder(folder)


def prune_tree(folder: int, tree: Tree | None, keep: Callable[[str], bool]) -> None:
    """Delete under ``folder`` what ``tree`` does not hold (None: everything), except the
    files ``keep(name)`` keeps; remove the sub-folders left empty. Links and other
    non-folders are deleted as themselves; only real folders are entered."""
    with os.scandir(folder) as entries:
        found = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_folder in found:
        node = tree.get(name) if tree is not None else None
        if is_folder:
            try:
                sub = os.open(name, _FOLDER, dir_fd=folder)
            except OSError:
                continue  # gone, or swapped for a link since the listing: never entered
            try:
                prune_tree(sub, node if isinstance(node, dict) else None, keep)
            finally:
                os.close(sub)
            if not isinstance(node, dict):
                with contextlib.suppress(OSError):  # not empty: a live save's file is kept
                    os.rmdir(name, dir_fd=folder)
        elif not isinstance(node, bytes) and not keep(name):
            with contextlib.suppress(FileNotFoundError):  # another cleaner was faster
                os.unlink(name, dir_fd=folder)


def fsync_folder(folder: int) -> None:
    """Sync the entries of the folder of descriptor ``folder``."""
    os.fsync(folder)


def _not_a_folder(where: Path, parent: int | None, name: str | None, exc: OSError) -> str:
    try:
        mode = os.stat(where if name is None else name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return f"cannot save a checkpoint: cannot open folder {str(where)!r}: {exc.strerror}"
    if stat.S_ISLNK(mode.st_mode):
        target = os.readlink(where if name is None else name, dir_fd=parent)
        return (
            f"cannot save a checkpoint: {str(where)!r} is a symbolic link (to {target!r}), and "
            f"a save never writes through a link in its checkpoint folder (it would write "
            f"and delete files in the link's target); remove the link, or save elsewhere"
        )
    return (
        f"cannot save a checkpoint: {str(where)!r} is not a folder, and the save writes a "
        f"folder there; remove it, or save elsewhere"
    )
