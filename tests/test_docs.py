"""The user's documentation: every relative link in README.md leads to a file of the repository, and the
interface contract it points to ships with it (docs/SPEC.md)."""

from __future__ import annotations

import re

from tests.cli_util import ROOT

# [text](target) and [text](target "title"); images too
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _relative_links(path):
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # code blocks hold no links
    for target in _LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http:, mailto:, ... and anchors within the page
        yield target.split("#", 1)[0]


def test_readme_relative_links_exist():
    links = list(_relative_links(ROOT / "README.md"))
    assert "docs/SPEC.md" in links  # the contract the README refers to is linked, not just named
    missing = [t for t in links if not (ROOT / t).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_the_contract_ships_in_the_repository():
    spec = (ROOT / "docs" / "SPEC.md").read_text()
    assert spec.startswith("# rigidsim — the interface contract")
    for section in ("## Command line", "## Options file", "## Trajectory file (HDF5, `format_version` 1)"):
        assert section in spec
