"""Options are read once, at the edge: BatchOptions.check turns sizes into bytes that flow down as numbers, and a
bad one is refused there in one line naming the option, whichever source gave it."""

from __future__ import annotations

import pytest

from oxi_cli.batch.options import BatchOptions
from oxi_cli.batch.schedule import memory_budget
from oxi_cli.errors import UsageError


def test_sizes_from_flags_and_recipes_become_bytes_once():
    opts = BatchOptions(memory_budget="2G", vram_limit="512M")
    opts.check()
    assert (opts.memory_budget, opts.vram_limit) == (2 << 30, 512 << 20)
    opts.check()  # a second check (the API, then the runner's) reads the numbers as they are
    assert memory_budget(opts.memory_budget) == 2 << 30

    from_recipe = BatchOptions()
    from_recipe.apply_settings({"memory_budget": 3 << 30})  # a recipe may give a number of bytes
    from_recipe.check()
    assert from_recipe.memory_budget == 3 << 30


@pytest.mark.parametrize(("field", "option"), [("memory_budget", "--memory-budget"), ("vram_limit", "--vram-limit")])
def test_a_size_that_cannot_be_read_is_refused_naming_its_option(field, option):
    with pytest.raises(UsageError, match=f"^{option}: cannot read memory size 'lots'"):
        BatchOptions(**{field: "lots"}).check()
