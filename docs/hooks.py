"""mkdocs hook: docstrings use Sphinx roles (``:class:`X```) that mkdocstrings shows verbatim; drop
the role."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|meth|func|attr|mod|data|exc|obj):(?=<code>|`)")


def on_page_content(html: str, **_: object) -> str:
    """Remove the Sphinx role prefix before inline code in a rendered page."""
    return ROLE.sub("", html)
