"""Write the API reference pages (``docs/api/*.md``) from the packages' lazy export tables.

Every public name of ``dpgames`` and of its subpackages' ``__all__`` gets a mkdocstrings entry
pointing at the module that defines it, so the reference cannot miss a name: ``tests/test_docs.py``
checks that the committed pages equal what this script writes.  Run ``python docs/gen_api.py`` after
changing an export.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

PACKAGES: dict[str, str] = {
    "dpgames": "The entry points a user starts from.",
    "dpgames.privacy": "Differential-privacy building blocks, exact audits and accounting.",
    "dpgames.mechanisms": "Mechanisms: the auction, the exact-truthfulness mechanisms, your own mechanism.",
    "dpgames.markets": "Markets for privacy: agents who value privacy, the sensitive surveyor, "
    "take-it-or-leave-it.",
    "dpgames.allocation": "Private allocation: a jointly private ascending-price auction for goods with copies.",
    "dpgames.games": "Large games: congestion and routing games, equilibria, the private mediator.",
    "dpgames.analysis": "Measurements and audits of incentives.",
    "dpgames.scenarios": "Scenario files: parse, run, the Result.",
    "dpgames.sweep": "Parameter sweeps: grids, parallel runs, summaries, plots.",
}
MODULES: dict[str, str] = {
    "dpgames.agents": "Populations of agents with private types: distributions, lists, CSV files.",
    "dpgames.testing": "pytest helpers for your own suites.",
    "dpgames.types": "Type spaces of ordinal preferences: rankings, weak orders, ordinal utility.",
    "dpgames.validation": "The checks every layer shares, and ValidationError.",
}
API = Path(__file__).resolve().parent / "api"
OPTIONS = "    options:\n      show_root_heading: true\n      heading_level: 2\n"


def page_name(package: str) -> str:
    """The file name of a package's page: ``dpgames.privacy`` -> ``privacy.md``, ``dpgames`` ->
    ``index.md``."""
    return "index.md" if package == "dpgames" else package.split(".", 1)[1] + ".md"


def defining_module(obj: object, listed: str) -> str:
    """The module that defines ``obj`` (a re-export is documented where it is written); a constant
    has no ``__module__`` of its own, so it is documented where the export table says it lives."""
    module = getattr(obj, "__module__", None)
    return (
        module if isinstance(module, str) and (callable(obj) or isinstance(obj, type)) else listed
    )


def package_page(package: str, summary: str) -> str:
    """The markdown of one package's page: one mkdocstrings entry per exported name, by defining
    module."""
    module = importlib.import_module(package)
    lines = [f"# `{package}`", "", summary, ""]
    for name in sorted(module._EXPORTS, key=str.lower):
        lines += [
            f"::: {defining_module(getattr(module, name), module._EXPORTS[name])}.{name}",
            OPTIONS,
        ]
    return "\n".join(lines)


def module_page(module: str, summary: str) -> str:
    """The markdown of a plain module's page (all of its ``__all__``)."""
    return "\n".join([f"# `{module}`", "", summary, "", f"::: {module}", OPTIONS])


def summary_of(obj: object) -> str:
    """The docstring's first sentence (its first paragraph when no full stop ends one), on one line."""
    paragraph = " ".join((obj.__doc__ or "").strip().split("\n\n")[0].split())
    end = re.search(r"\.(\s|$)", paragraph)
    return (paragraph[: end.start() + 1] if end else paragraph).replace("|", "\\|")


def entry_points_page(summary: str) -> str:
    """The top-level page: each entry point links to its one entry on its subpackage's or module's
    page."""
    module = importlib.import_module("dpgames")
    lines = ["# `dpgames`", "", summary, "", "| name | what it is |", "|---|---|"]
    for name in sorted(module._EXPORTS, key=str.lower):
        obj = getattr(module, name)
        lines.append(
            f"| [`{name}`][{defining_module(obj, module._EXPORTS[name])}.{name}] | {summary_of(obj)} |"
        )
    return "\n".join(lines) + "\n"


def pages() -> dict[str, str]:
    """Every API page, by file name."""
    out = {page_name(p): package_page(p, s) for p, s in PACKAGES.items() if p != "dpgames"}
    out["index.md"] = entry_points_page(PACKAGES["dpgames"])
    out.update({m.split(".", 1)[1] + ".md": module_page(m, s) for m, s in MODULES.items()})
    return out


if __name__ == "__main__":
    API.mkdir(exist_ok=True)
    for name, text in pages().items():
        (API / name).write_text(text)
    print(f"wrote {len(pages())} pages to {API}")
