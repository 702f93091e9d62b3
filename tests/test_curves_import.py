"""``from dpgames.analysis import gain_curve`` is the function, whatever was imported before: its
module has another name (a submodule named like the function would replace it on the package once
imported)."""

import importlib

import dpgames.analysis


def test_gain_curve_stays_the_function_after_its_module_is_imported():
    module = importlib.import_module("dpgames.analysis.curves")
    from dpgames.analysis import gain_curve

    assert callable(gain_curve) and gain_curve is module.gain_curve
    assert dpgames.analysis.gain_curve is module.gain_curve
