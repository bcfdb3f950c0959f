"""The calibration fit, on timings made from known constants, and the command end to end."""

import json

import numpy as np
import pytest

from giql_spark.planner import constants
from giql_spark.planner.calibrate import calibrate, fit_binned


def _points(row, cand, noise=0.0, seed=0):
    """Timings of two data sets over a bin-size grid from known constants."""
    rng = np.random.default_rng(seed)
    pts = []
    for name, base, n, width, density in (("uniform", 0.8, 2e6, 1_000, 320.0),
                                          ("heavy", 1.1, 2e6, 20_000, 320.0)):
        for b in (2_000, 10_000, 50_000, 200_000, 1_000_000):
            rows = n * (1 + width / b)
            cands = density * b * (1 + width / b) ** 2
            t = base + row * rows + cand * cands
            pts.append((name, rows, cands, t * (1 + noise * rng.standard_normal())))
    return pts


def test_fit_recovers_known_constants():
    row, cand = fit_binned(_points(1e-6, 5e-9))
    assert row == pytest.approx(1e-6, rel=1e-6)
    assert cand == pytest.approx(5e-9, rel=1e-6)


def test_fit_tolerates_noise():
    row, cand = fit_binned(_points(1e-6, 5e-9, noise=0.03, seed=4))
    assert row == pytest.approx(1e-6, rel=0.3)
    assert cand == pytest.approx(5e-9, rel=0.3)


def test_fit_keeps_constants_positive():
    # Timings that fall as candidates grow: the free fit would be negative.
    row, cand = fit_binned(_points(1e-6, -2e-10))
    assert row == pytest.approx(1e-6, rel=0.3)
    assert 0 < cand <= 1e-12


def test_fit_needs_more_points_than_unknowns():
    assert fit_binned([("u", 1.0, 1.0, 1.0), ("u", 2.0, 1.0, 1.5)]) is None


def test_calibrate_writes_a_loadable_file(session, tmp_path, monkeypatch):
    target = tmp_path / "calibration.json"
    monkeypatch.setenv("GIQL_SPARK_CALIBRATION", str(target))
    lines = []
    doc = calibrate(session, rows=4_000, repeats=1, log=lines.append)
    saved = json.loads(target.read_text())
    loaded, origin = constants.load()
    assert origin.startswith("calibrated")
    strategies = {r["strategy"] for r in saved["runs"]}
    from giql_spark.planner import registry

    # Every strategy this session can run, the JVM operators included; the generated files
    # are sorted, so the merge of sorted files is timed too.
    assert strategies == set(registry.BATCH) - set(registry.unavailable(session.spark))
    assert {"binned", "sweep", "broadcast", "naive"} <= strategies
    for strategy in strategies:
        factor = loaded[f"scale_{strategy}"]
        assert factor == doc["constants"][f"scale_{strategy}"] and factor > 0
    assert all(r["measured_s"] > 0 and r["estimated_s"] > 0 for r in saved["runs"])
    assert lines[-1].startswith(f"wrote {target}")


def test_shipped_defaults_are_the_shipped_calibration():
    """The defaults ``giql-spark calibrate`` fitted (the binned join's shuffle and candidate
    costs, each Python-era strategy's scale) are the ones in the calibration kept beside the
    planner: an edit to either without the other fails here."""
    import json
    from pathlib import Path

    from giql_spark.planner import constants

    shipped = json.loads((Path(constants.__file__).parent / "calibration.json").read_text())["constants"]
    fitted = ["row_shuffle", "candidate"] + [k for k in shipped if k.startswith("scale_")]
    assert len(fitted) >= 6
    for key in fitted:
        assert constants.DEFAULTS[key] == shipped[key], key
