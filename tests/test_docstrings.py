"""Every public function and class is documented in numpydoc sections (the rules are in docstring_rules)."""

from __future__ import annotations

import pytest
from docstring_rules import problems, public_objects

PUBLIC = list(public_objects())


def test_the_public_api_is_found():
    names = {name for name, _, _ in PUBLIC}
    assert "optdesign.linear.classical.dg_designs.g_optimal" in names
    assert "optdesign.factored.graph.generators.FactorGraphGenerators.ring" in names
    assert "bandits.run.run" in names
    assert not any(name.startswith(("optdesign.cli.", "bandits.cli")) for name in names)


@pytest.mark.parametrize(("name", "obj", "owner"), PUBLIC, ids=[name for name, _, _ in PUBLIC])
def test_numpydoc_sections(name, obj, owner):
    found = problems(name, obj, owner)
    assert not found, f"{name}: " + "; ".join(found)
