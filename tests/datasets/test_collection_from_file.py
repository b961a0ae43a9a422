"""A user's table as a text collection (datasets.collection.collection_from_file)."""

from __future__ import annotations

from pragmeter.datasets.collection import collection_from_file


def test_an_empty_label_cell_is_no_label_not_a_group_named_nan(tmp_path):
    path = tmp_path / "texts.csv"
    path.write_text("text,label\nIt is cold in here.,a\nClose the window.,\nNice weather.,b\nGo.,  \n",
                    encoding="utf-8")
    collection = collection_from_file(path, label_columns=["label"])
    assert collection.groupings["label"] == ["a", None, "b", None]
