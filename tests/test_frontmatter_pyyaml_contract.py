"""The frontmatter parser overrides parts of PyYAML's scanner, parser and composer (private API).

``pi_nb.resources.frontmatter._Loader`` subclasses ``yaml.SafeLoader`` and replaces a few of its
methods to match the JavaScript YAML library Pi uses (tabs as separating white space, alias positions,
anchor redefinition). Those methods are not PyYAML's public API, so pyproject bounds PyYAML below 7
and this test pins the contract: every method we replace still exists in PyYAML with the same
parameters, and every internal attribute we read is still set by PyYAML's own constructor. A PyYAML
release that changes any of it fails here, by name, before a skill is parsed wrongly.
"""

from __future__ import annotations

import inspect

import pytest
import yaml

from pi_nb.resources import frontmatter

OWN_HELPERS = {"_check_tab_indent", "_check_flow_indent", "_parse_empty_key_value"}
# attributes of PyYAML's Reader / Scanner / Parser / Composer that the overrides read or write
INTERNAL_ATTRIBUTES = ("buffer", "pointer", "flow_level", "indent", "anchors", "tokens", "states", "marks")


def _overrides() -> dict[str, object]:
    return {
        name: value
        for name, value in vars(frontmatter._Loader).items()
        if inspect.isfunction(value) and name not in OWN_HELPERS and name != "__init__"
    }


def test_every_replaced_method_exists_in_pyyaml_with_the_same_parameters() -> None:
    overrides = _overrides()
    assert overrides, "the loader overrides nothing: update this test"
    for name, ours in overrides.items():
        theirs = getattr(yaml.SafeLoader, name, None)
        assert theirs is not None, f"PyYAML {yaml.__version__} has no {name}: the frontmatter override is dead"
        ours_params = list(inspect.signature(ours).parameters)  # type: ignore[arg-type]
        their_params = list(inspect.signature(theirs).parameters)
        assert ours_params == their_params, (name, ours_params, their_params)


def test_the_internal_state_the_overrides_use_is_still_there() -> None:
    loader = yaml.SafeLoader("a: 1\n")
    try:
        for attribute in INTERNAL_ATTRIBUTES:
            assert hasattr(loader, attribute), f"PyYAML {yaml.__version__} no longer sets {attribute}"
        for method in ("peek", "prefix", "forward", "get_mark", "check_token", "peek_token", "get_token"):
            assert callable(getattr(loader, method, None)), method
    finally:
        loader.dispose()


def test_pyyaml_is_the_major_version_pyproject_allows() -> None:
    assert yaml.__version__.split(".")[0] == "6"


def test_the_overrides_still_change_what_pyyaml_does() -> None:
    """Behaviours that exist only because of the overrides (PyYAML alone refuses or differs)."""
    text = "---\nname:\tmy-skill\ndescription: a\tb\n---\nbody\n"
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("name:\tmy-skill\n")  # plain PyYAML: a tab cannot start a token
    data, body = frontmatter.parse_frontmatter(text)
    assert data == {"name": "my-skill", "description": "a\tb"}
    assert body == "body"
