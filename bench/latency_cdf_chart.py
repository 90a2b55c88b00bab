#!/usr/bin/env python3
"""Draws latency CDFs (SVG, no dependencies) from the `label,ns,fraction`
rows that `sbe_vs_resp_ring --cdf FILE` (and gb_hist_write_cdf) write.

    /usr/bin/python3 bench/latency_cdf_chart.py ring-cdf.csv docs/img/ring-latency-cdf.svg \
        [--title "..."] [--labels "floor,PING sbe,PING resp,ZADD10 sbe,ZADD10 resp"]

The x axis is logarithmic (nanoseconds), the y axis the fraction of round
trips at or below that latency.
"""
import argparse
import math

COLORS = ["#555555", "#1565c0", "#90caf9", "#2e7d32", "#a5d6a7", "#c62828", "#ef9a9a", "#6a1b9a", "#ce93d8",
          "#ef6c00", "#ffcc80"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("svg")
    ap.add_argument("--title", default="Ring round-trip latency (CDF)")
    ap.add_argument("--labels", help="comma-separated subset and order of series")
    a = ap.parse_args()

    series = {}
    order = []
    with open(a.csv) as f:
        for line in f:
            parts = line.strip().rsplit(",", 2)
            if len(parts) != 3:
                continue
            label, ns, frac = parts[0], float(parts[1]), float(parts[2])
            if label not in series:
                series[label] = []
                order.append(label)
            series[label].append((max(ns, 1.0), frac))
    if a.labels:
        order = [l for l in a.labels.split(",") if l in series]

    w, h, left, right, top, bottom = 760, 420, 60, 190, 40, 50
    xs = [p[0] for l in order for p in series[l]]
    lo = 10 ** math.floor(math.log10(min(xs)))
    hi = 10 ** math.ceil(math.log10(max(xs)))

    def x(ns):
        return left + (math.log10(ns) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (w - left - right)

    def y(frac):
        return top + (1 - frac) * (h - top - bottom)

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (w, h), '<text x="%d" y="22" font-size="15">%s</text>' % (left, a.title)]
    decade = lo
    while decade <= hi:
        for m in (1, 2, 5):
            v = decade * m
            if lo <= v <= hi:
                out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>'
                           % (x(v), top, x(v), h - bottom, "#ccc" if m == 1 else "#eee"))
                if m == 1:  # label decades only: 2x and 5x would collide
                    label = "%g ns" % v if v < 1000 else "%g µs" % (v / 1000)
                    out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x(v), h - bottom + 16, label))
        decade *= 10
    for frac in (0, 0.5, 0.9, 0.99):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>' % (left, y(frac), w - right, y(frac)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (left - 6, y(frac) + 4, frac))
    for i, label in enumerate(order):
        pts = " ".join("%.1f,%.1f" % (x(ns), y(fr)) for ns, fr in series[label])
        color = COLORS[i % len(COLORS)]
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (color, pts))
        ly = top + 10 + i * 18
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>'
                   % (w - right + 15, ly, w - right + 35, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (w - right + 40, ly + 4, label))
    out.append('<text x="%d" y="%d" text-anchor="middle">round-trip latency (log scale)</text>'
               % ((left + w - right) // 2, h - 10))
    out.append("</svg>")
    with open(a.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
