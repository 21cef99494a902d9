"""The accuracy table and the plots drawn from octet's results."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import octet  # noqa: E402


@pytest.fixture(scope="module")
def report(lenet, quantized):
    return octet.evaluate(lenet, quantized.model, limit=300)


def test_accuracy_table_has_one_row_per_report(report):
    table = octet.accuracy_table({"mse": report, "again": report}).splitlines()
    assert len(table) == 4
    assert "float top-1" in table[0] and "int8 top-1" in table[0]
    assert table[2].startswith("mse") and f"{report['int8_top1']:.2f}%" in table[2]


def test_plot_sqnr_draws_one_bar_per_layer_and_report(report):
    reports = {"a": report, "b": report}
    ax = octet.plot_sqnr(reports)
    bars = [p for p in ax.patches]
    assert len(bars) == 2 * len(report["layers"])
    heights = sorted(b.get_height() for b in bars if math.isfinite(b.get_height()))
    assert heights[-1] == pytest.approx(max(l["sqnr_db"] for l in report["layers"]))
    assert [t.get_text() for t in ax.get_xticklabels()] == [l["name"] for l in report["layers"]]
    plt.close("all")
    single = octet.plot_sqnr(report)
    assert len(single.patches) == len(report["layers"])
    plt.close("all")


def test_plot_sqnr_refuses_reports_of_different_layers(report):
    other = dict(report, layers=report["layers"][:-1])
    with pytest.raises(ValueError, match="other layers"):
        octet.plot_sqnr({"a": report, "b": other})


def test_plot_histogram_marks_the_clipping_values(quantized):
    point = quantized.points[1]
    ax = octet.plot_histogram(point)
    assert [line.get_xdata()[0] for line in ax.lines] == [point["amax"]]
    plt.close("all")
    ax = octet.plot_histogram(point, amax={"max": point["abs_max"], "mse": point["amax"]}, title="t")
    assert len(ax.lines) == 2 and ax.get_title() == "t"
    plt.close("all")
