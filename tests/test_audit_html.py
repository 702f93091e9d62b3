"""The audits of a user's own mechanism show themselves in Jupyter (``_repr_html_``): the HTML,
parsed back with the standard library's parser, holds the audit's own headline figures and
verdict."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

from dpgames import CustomMechanism, truthfulness_audit


class Cells(HTMLParser):
    """The title (bold) and the (name, value) rows of an html_table."""

    def __init__(self) -> None:
        super().__init__()
        self.title, self.cells, self._where = "", [], None

    def handle_starttag(self, tag, attrs):
        self._where = tag

    def handle_data(self, data):
        if self._where == "b":
            self.title += data
        elif self._where == "td":
            self.cells.append(data)

    def rows(self) -> dict[str, str]:
        return dict(zip(self.cells[::2], self.cells[1::2]))


def parsed(audit) -> tuple[str, dict[str, str]]:
    parser = Cells()
    parser.feed(audit._repr_html_())
    return parser.title, parser.rows()


def utility(t, o):
    return -abs(t - o)


MEAN = CustomMechanism(
    lambda r: round(sum(r) / len(r)), utility, types=range(5), anonymous=True, name="mean"
)


def noisy_mean(reports, rng):
    return int(np.clip(round(sum(reports) / len(reports) + rng.normal()), 0, 4))


@pytest.mark.parametrize(
    "make",
    [
        lambda: truthfulness_audit(MEAN, [1, 3, 4]),
        lambda: truthfulness_audit(MEAN, [1, 3, 4], true_types="all"),
        lambda: truthfulness_audit(MEAN, n=3, profiles="all"),
        lambda: truthfulness_audit(MEAN, n=3, prior={0: 0.2, 2: 0.5, 4: 0.3}),
        lambda: truthfulness_audit(MEAN, n=3, prior={0: 0.2, 2: 0.5, 4: 0.3}, samples=50, rng=0),
        lambda: truthfulness_audit(
            noisy_mean, [1, 3, 4], utility=utility, types=range(5), samples=40, rng=0
        ),
    ],
    ids=["ex post", "every true type", "dominant", "bayesian", "bayesian sampled", "sampled rule"],
)
def test_the_html_shows_the_worst_lie_and_the_verdict(make):
    audit = make()
    title, rows = parsed(audit)
    worst = audit.worst_case
    assert title == audit.describe().splitlines()[0]
    assert float(rows["largest gain"]) == pytest.approx(worst["gain"], rel=1e-5)
    assert rows["agent"] == f"{worst['agent']:,}"
    assert rows["true type"] == repr(worst["true_type"]) and rows["lie"] == repr(worst["lie"])
    assert rows["truthful"] == str(audit.is_truthful())
    if worst.get("ci") is not None:
        low, high = (float(x) for x in rows["95% CI"].strip("[]").split(","))
        assert (low, high) == pytest.approx(worst["ci"], rel=1e-5)
    else:
        assert "95% CI" not in rows


def test_the_title_is_escaped():
    audit = truthfulness_audit(
        CustomMechanism(lambda r: max(r), utility, types=range(3), name="<b>max</b>"), [0, 2]
    )
    html = audit._repr_html_()
    assert "<b>max</b>" not in html.replace("<b>ex-post", "") and "&lt;b&gt;max&lt;/b&gt;" in html
