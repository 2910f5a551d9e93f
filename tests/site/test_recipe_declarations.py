"""Each recipe declares its level and order in its notebook's front matter (docs/_ext/recipe_gallery.py);
a missing, unknown or clashing declaration fails the site build and names the notebook."""

from __future__ import annotations

from pathlib import Path

import pytest

from docs._ext import recipe_gallery
from ffi_cookbook import catalog

HEADER = "---\njupytext:\n  text_representation:\n    extension: .md\n"


def recipe(tmp_path: Path, name: str, block: str) -> catalog.Recipe:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "notebook.md").write_text(f"{HEADER}{block}---\n\n# {name}\n")
    return catalog.Recipe(name, folder, name, ("CPU",))


def test_every_recipe_declares_a_level_and_a_free_order():
    path = recipe_gallery.reading_path()
    assert sorted(r.name for level in path.values() for r in level) == [r.name for r in catalog.recipes()]
    assert all(path.values()), "a level of LEVELS with no recipe: drop it or move a recipe there"


def test_the_path_follows_the_declared_order_not_the_number(tmp_path):
    late = recipe(tmp_path, "26-late", "cookbook:\n  level: basics\n  order: 15\n")
    early = recipe(tmp_path, "01-early", "cookbook:\n  level: basics\n  order: 10\n")
    gpu = recipe(tmp_path, "02-gpu", "cookbook:\n  level: gpu\n  order: 10\n  tools: [ninja]\n")
    path = recipe_gallery.reading_path([late, early, gpu])
    assert [r.name for r in path["basics"]] == ["01-early", "26-late"] and path["gpu"] == [gpu]
    assert recipe_gallery.declared(gpu.folder)["tools"] == ["ninja"]
    assert recipe_gallery.declared(late.folder)["tools"] == []


@pytest.mark.parametrize("block, message", [
    ("", "declares no 'cookbook:' block"),
    ("cookbook:\n  level: basics\n", "lacks ['order']"),
    ("cookbook:\n  level: expert\n  order: 10\n", "level 'expert' is not one of"),
    ("cookbook:\n  level: basics\n  order: ten\n", "order 'ten' is not an integer"),
    ("cookbook:\n  level: basics\n  order: 10\n  needs: gpu\n", "unknown keys ['needs']"),
    ("cookbook:\n  level: basics\n  order: 10\n  tools: ninja\n", "is not a list"),
])
def test_a_bad_declaration_names_the_notebook(tmp_path, block, message):
    bad = recipe(tmp_path, "26-bad", block)
    with pytest.raises(ValueError, match="26-bad/notebook.md") as raised:
        recipe_gallery.reading_path([bad])
    assert message in str(raised.value)


def test_two_recipes_in_one_place_are_named(tmp_path):
    one = recipe(tmp_path, "26-one", "cookbook:\n  level: basics\n  order: 50\n")
    two = recipe(tmp_path, "27-two", "cookbook:\n  level: basics\n  order: 50\n")
    with pytest.raises(ValueError, match=r"\['26-one', '27-two'\] both declare level 'basics' and order 50"):
        recipe_gallery.reading_path([one, two])
