"""Local storage removes a tree whole, its folders together (a marker folder holds a folder per partition),
and says how many files it held."""

from __future__ import annotations

import os

from hoodie_datasource.storage.local import LocalStorage


def test_a_tree_of_many_folders_is_removed_whole_and_its_files_counted(tmp_path):
    storage = LocalStorage(str(tmp_path))
    files = [f".hoodie/.temp/001/dt={d}/f{i}.parquet.marker.CREATE" for d in range(30) for i in range(d % 3 + 1)]
    files += [".hoodie/.temp/001/dt=7/nested/deeper/x.marker.APPEND", ".hoodie/.temp/001/MARKERS.type"]
    storage.write_all([(f, b"") for f in files])
    storage.write(".hoodie/.temp/002/dt=1/kept.marker.CREATE", b"")
    assert storage.delete_tree(".hoodie/.temp/001") == len(files)
    assert not os.path.exists(tmp_path / ".hoodie/.temp/001")
    assert [f.path for f in storage.list_tree(".hoodie/.temp")] == [".hoodie/.temp/002/dt=1/kept.marker.CREATE"]


def test_a_missing_tree_or_one_folder_is_removed_as_well(tmp_path):
    storage = LocalStorage(str(tmp_path))
    assert storage.delete_tree("missing") == 0
    storage.write("one/dt=1/a", b"x")
    assert storage.delete_tree("one") == 1 and not os.path.exists(tmp_path / "one")
    storage.write("flat/a", b"x")
    storage.write("flat/b", b"y")
    assert storage.delete_tree("flat") == 2 and not os.path.exists(tmp_path / "flat")
