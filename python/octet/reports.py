"""Tables and plots of octet's results: the float vs int8 accuracy table, the
per-layer sensitivity table, the per-layer SQNR plot and calibration histograms
with the chosen clipping values. matplotlib is imported only when a plot is drawn."""

import math


def accuracy_table(reports):
    """A text table of float vs int8 top-1, one row per evaluate() report.

    reports: a dict {label: report} (for example one per quantization method).
    """
    header = f"{'model':<24} {'images':>7} {'float top-1':>12} {'int8 top-1':>11} {'difference':>11} {'agreement':>10}"
    rows = [header, "-" * len(header)]
    for label, r in reports.items():
        rows.append(
            f"{label:<24} {r['images']:>7} {r['float_top1']:>11.2f}% {r['int8_top1']:>10.2f}% "
            f"{r['top1_difference']:>+11.2f} {r['agreement']:>9.2f}%"
        )
    return "\n".join(rows)


def sensitivity_table(rows):
    """A text table of sensitivity() (or a quantize result's accuracy_target["sensitivity"]):
    per weighted layer its share of the MACs and the validation agreement with float with
    only it in float and with only it in int8, the layers that cost most first."""
    header = f"{'layer':<32} {'op':<8} {'MACs':>7} {'only it float':>14} {'only it int8':>13}"
    lines = [header, "-" * len(header)]
    for r in sorted(rows, key=lambda r: (-r["agreement_only_it_float"], r["agreement_only_it_int8"])):
        lines.append(
            f"{r['name']:<32} {r['op']:<8} {100 * r['mac_share']:>6.1f}% {r['agreement_only_it_float']:>13.2f}% "
            f"{r['agreement_only_it_int8']:>12.2f}%"
        )
    return "\n".join(lines)


def _axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize)[1]


def plot_sqnr(reports, ax=None):
    """Bar chart of the per-layer SQNR (dB) of one or more evaluate() reports.

    reports: a report, or a dict {label: report} whose reports cover the same
    layers (the same model quantized different ways). Returns the axes.
    """
    if "layers" in reports:
        reports = {"int8": reports}
    labels = list(reports)
    layers = [layer["name"] for layer in reports[labels[0]]["layers"]]
    for label in labels:
        if [layer["name"] for layer in reports[label]["layers"]] != layers:
            raise ValueError(f"report '{label}' has other layers than '{labels[0]}'; plot them separately")
    ax = _axes(ax, (max(6.0, 0.6 * len(layers) * len(labels)), 4.0))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        # An exact layer (no error) has infinite SQNR: no bar.
        values = [layer["sqnr_db"] for layer in reports[label]["layers"]]
        finite = [v if math.isfinite(v) else float("nan") for v in values]
        xs = [i + (k - (len(labels) - 1) / 2) * width for i in range(len(layers))]
        ax.bar(xs, finite, width=width, label=label)
    ax.set_xticks(range(len(layers)))
    ax.set_xticklabels(layers, rotation=45, ha="right")
    ax.set_ylabel("SQNR (dB)")
    ax.set_title("Per-layer SQNR of the int8 model against float")
    ax.grid(axis="y", alpha=0.3)
    if len(labels) > 1:
        ax.legend()
    return ax


def plot_histogram(stats, amax=None, ax=None, title=None, bins=128):
    """The calibration histogram of |x| of one tensor (a QuantizeResult point or
    stats() dict), log scale, with vertical lines at clipping values.

    amax: a number, or a dict {label: amax} (for example one per method); by
    default the point's own amax when it has one. bins: about how many bars
    to draw; adjacent calibration bins (2048) are summed. Returns the axes.
    """
    import numpy

    ax = _axes(ax, (6.0, 3.5))
    counts = stats["histogram"]
    used = counts.nonzero()[0]
    last = int(used[-1]) + 1 if len(used) else len(counts)
    group = max(1, math.ceil(last / bins))
    groups = math.ceil(last / group)
    padded = numpy.zeros(groups * group, dtype=counts.dtype)
    padded[:last] = counts[:last]
    edges = numpy.arange(groups + 1) * (group * stats["bin_width"])
    ax.stairs(padded.reshape(groups, group).sum(axis=1), edges, fill=True, alpha=0.6)
    ax.set_yscale("log")
    ax.set_xlabel("|x|")
    ax.set_ylabel("count")
    if amax is None and "amax" in stats:
        amax = {stats.get("method", "amax"): stats["amax"]}
    if isinstance(amax, (int, float)):
        amax = {"amax": amax}
    for k, (label, value) in enumerate((amax or {}).items()):
        ax.axvline(value, color=f"C{k + 1}", linestyle="--", label=f"{label} {value:.3g}")
    if amax:
        ax.legend(fontsize="small")
    ax.set_title(title if title is not None else stats.get("name", ""))
    return ax
