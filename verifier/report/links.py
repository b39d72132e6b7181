"""The names of a report's pages, shared by the pages and FINDINGS.md (which links into them)."""
from __future__ import annotations

from verifier.files import file_stem


def claim_page(cid: str) -> str:
    """The name of a claim's page, beside its game's page."""
    return f"claim.{file_stem(cid)}"


def slugify(name: str) -> str:
    """A game's folder name."""
    return file_stem(name) if name.strip("-. ") else "model"
