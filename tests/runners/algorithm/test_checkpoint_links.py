"""A save into an existing checkpoint folder touches nothing outside it, links or not.

Each test plants a victim tree outside the checkpoint (a thesis, some data, files named as
a save names its own, to bait a replacement), links part of the checkpoint to it, saves
into the checkpoint again and checks every file of the victim byte for byte (by SHA-256),
and the links themselves. A linked sub-folder, at every depth the save writes into, is
refused before anything is written; a linked file is replaced (or, stale, deleted) as the
link itself.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookbus.kernel import ConfigError
from hookbus.runners import PPO, Algorithm, PPOConfig, RLModule

MODULE = Path("learner_group", "learner", "rl_module", "default_policy")
MODULE_FILE = MODULE / "module_state.msgpack"
LINKED_FOLDERS = [Path(*MODULE.parts[: depth + 1]) for depth in range(len(MODULE.parts))]


def plant_victim(root: Path) -> Path:
    """Make a tree of someone's files outside any checkpoint; return its folder."""
    victim = root / "victim" / "precious"
    (victim / "learner" / "rl_module" / "default_policy").mkdir(parents=True)
    (victim / "thesis.txt").write_text("four years of work\n")
    (victim / "data.bin").write_bytes(os.urandom(4096))
    (victim / "module_state.msgpack").write_bytes(b"not a module, and not the save's")
    (victim / "learner" / "notes.md").write_text("# notes\n")
    (victim / "learner" / "rl_module" / "default_policy" / "module_state.msgpack").write_bytes(
        b"bait: where the save would write through a linked learner_group"
    )
    return root / "victim"


def snapshot(tree: Path) -> dict[str, str]:
    """Return every entry under ``tree``: files by SHA-256, links by target, folders."""
    found = {}
    for path in sorted(tree.rglob("*")):
        name = str(path.relative_to(tree))
        if path.is_symlink():
            found[name] = f"link to {os.readlink(path)}"
        elif path.is_dir():
            found[name] = "folder"
        else:
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


@pytest.fixture
def algo(small_ppo: PPOConfig) -> Iterator[Algorithm]:
    with small_ppo.build() as built:
        yield built


def test_the_victim_snapshot_sees_a_changed_byte(tmp_path: Path) -> None:
    victim = plant_victim(tmp_path)
    before = snapshot(victim)
    assert "precious/thesis.txt" in before
    (victim / "precious" / "thesis.txt").write_text("four years of work!\n")
    assert snapshot(victim) != before


@pytest.mark.parametrize("linked", LINKED_FOLDERS, ids=str)
def test_a_linked_sub_folder_is_refused_and_its_target_untouched(
    algo: Algorithm, tmp_path: Path, linked: Path
) -> None:
    checkpoint = algo.save_to_path(tmp_path / "checkpoint")
    victim = plant_victim(tmp_path)
    target = victim / "precious"
    shutil.rmtree(checkpoint / linked)
    os.symlink(target, checkpoint / linked)
    before, old_file = snapshot(victim), (checkpoint / "algorithm_state.msgpack").read_bytes()
    algo.train()  # another state: a save that went through would write other bytes
    message = re.escape(f"{str(checkpoint / linked)!r} is a symbolic link (to {str(target)!r})")
    with pytest.raises(ConfigError, match=message + ".* remove the link"):
        algo.save_to_path(checkpoint)
    assert snapshot(victim) == before
    assert os.readlink(checkpoint / linked) == str(target)
    # Refused before anything was written: the old checkpoint is whole and restores.
    assert (checkpoint / "algorithm_state.msgpack").read_bytes() == old_file
    assert [p.name for p in checkpoint.iterdir() if p.name.startswith(".")] == []
    PPO.from_checkpoint(checkpoint).stop()


def test_a_linked_module_file_is_replaced_as_the_link_itself(
    algo: Algorithm, tmp_path: Path
) -> None:
    checkpoint = algo.save_to_path(tmp_path / "checkpoint")
    victim = plant_victim(tmp_path)
    (checkpoint / MODULE_FILE).unlink()
    os.symlink(victim / "precious" / "thesis.txt", checkpoint / MODULE_FILE)
    os.symlink(victim / "precious" / "data.bin", checkpoint / "algorithm_state.msgpack.link")
    before = snapshot(victim)
    algo.save_to_path(checkpoint)
    assert snapshot(victim) == before
    assert not (checkpoint / MODULE_FILE).is_symlink()
    RLModule.from_checkpoint(checkpoint / MODULE)  # the save's own file, complete


def test_a_linked_checkpoint_file_is_replaced_as_the_link_itself(
    algo: Algorithm, tmp_path: Path
) -> None:
    checkpoint = algo.save_to_path(tmp_path / "checkpoint")
    victim = plant_victim(tmp_path)
    (checkpoint / "algorithm_state.msgpack").unlink()
    os.symlink(victim / "precious" / "thesis.txt", checkpoint / "algorithm_state.msgpack")
    before = snapshot(victim)
    algo.save_to_path(checkpoint)
    assert snapshot(victim) == before
    assert not (checkpoint / "algorithm_state.msgpack").is_symlink()
    PPO.from_checkpoint(checkpoint).stop()


def test_stale_links_in_the_modules_tree_are_deleted_never_followed(
    algo: Algorithm, tmp_path: Path
) -> None:
    checkpoint = algo.save_to_path(tmp_path / "checkpoint")
    victim = plant_victim(tmp_path)
    modules = checkpoint / MODULE.parent
    os.symlink(victim / "precious", modules / "removed_policy")  # a folder's place
    os.symlink(victim / "precious" / "thesis.txt", checkpoint / MODULE / "old.msgpack")
    os.symlink(victim / "precious" / "learner", checkpoint / "learner_group" / "stale")
    before = snapshot(victim)
    algo.save_to_path(checkpoint)
    assert snapshot(victim) == before
    assert sorted(p.name for p in modules.iterdir()) == ["default_policy"]
    assert sorted(p.name for p in (checkpoint / MODULE).iterdir()) == ["module_state.msgpack"]
    assert sorted(p.name for p in (checkpoint / "learner_group").iterdir()) == ["learner"]


def test_a_file_where_the_save_writes_a_folder_is_refused(algo: Algorithm, tmp_path: Path) -> None:
    checkpoint = algo.save_to_path(tmp_path / "checkpoint")
    shutil.rmtree(checkpoint / MODULE)
    (checkpoint / MODULE).write_text("a file, not a folder")
    with pytest.raises(ConfigError, match=re.escape(f"{str(checkpoint / MODULE)!r} is not a")):
        algo.save_to_path(checkpoint)
    assert (checkpoint / MODULE).read_text() == "a file, not a folder"


def test_a_linked_checkpoint_folder_in_a_new_parent_is_still_refused(
    algo: Algorithm, tmp_path: Path
) -> None:
    victim = plant_victim(tmp_path)
    before = snapshot(victim)
    os.symlink(victim / "precious", tmp_path / "checkpoint")
    with pytest.raises(ConfigError, match="it is a symbolic link"):
        algo.save_to_path(tmp_path / "checkpoint")
    assert snapshot(victim) == before
