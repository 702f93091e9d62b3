import numpy as np
import pytest
from scipy import stats

from dpgames import Beta, Discrete, Population, Uniform
from dpgames.agents import quasi_linear_utility


@pytest.mark.parametrize(
    "dist, cdf",
    [
        (Uniform(0.2, 0.7), stats.uniform(0.2, 0.5).cdf),
        (Beta(2.0, 5.0), stats.beta(2, 5).cdf),
    ],
)
def test_continuous_type_distributions(dist, cdf):
    pop = Population.draw(dist, 20_000, rng=1)
    assert stats.kstest(pop.values, cdf).pvalue > 1e-3
    assert np.array_equal(pop.values, Population.draw(dist, 20_000, rng=1).values)


def test_discrete_types_frequencies():
    pop = Population.draw(Discrete((0.1, 0.5, 0.9), (0.2, 0.3, 0.5)), 50_000, rng=2)
    counts = [(pop.values == v).sum() for v in (0.1, 0.5, 0.9)]
    assert stats.chisquare(counts, np.array([0.2, 0.3, 0.5]) * 50_000).pvalue > 1e-3


def test_csv_with_and_without_header(tmp_path):
    (tmp_path / "a.csv").write_text("0.1\n0.4\n\n0.9\n")
    assert Population.from_csv(tmp_path / "a.csv").values.tolist() == [0.1, 0.4, 0.9]
    (tmp_path / "b.csv").write_text("id,value\nx,0.3\ny,0.6\n")
    assert Population.from_csv(tmp_path / "b.csv", "value").values.tolist() == [0.3, 0.6]
    with pytest.raises(ValueError, match="no column 'bid'"):
        Population.from_csv(tmp_path / "b.csv", "bid")
    with pytest.raises(ValueError, match="file not found"):
        Population.from_csv(tmp_path / "none.csv")


def test_population_checks():
    with pytest.raises(ValueError, match="at least one agent"):
        Population.from_list([])
    with pytest.raises(ValueError, match="agent 1 has type 2"):
        Population.from_list([0.5, 2.0]).check_within(0, 1)
    with pytest.raises(ValueError):
        Uniform(0.8, 0.2)
    with pytest.raises(ValueError):
        Discrete((0.1, 0.2), (0.5, 0.6))


def test_quasi_linear_utility():
    u = quasi_linear_utility([0.8, 0.8, 0.3], 0.5, [True, False, True])
    assert np.allclose(u, [0.3, 0.0, -0.2])
