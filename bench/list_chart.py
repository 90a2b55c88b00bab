#!/usr/bin/env python3
"""SVG bar chart of the list work-queue benchmark (no plotting library).

    build-release/goblin_core_list_work_queue_benchmark "$PWD/build-release/goblin-core" 200000 64 \\
        --compare-redis /usr/bin/redis-server --csv > lwq.csv
    python3 bench/list_chart.py lwq.csv docs/img/lists-work-queue.svg [--title TEXT]

Reads the benchmark's --csv output (operation,backend,commands_per_sec,
values_per_sec; the paired and park-to-wake blocks after it are ignored)
and draws one group of horizontal bars per operation: segmented, pma and,
when present, redis, in commands per second, each labelled with its value.
"""

import argparse
import csv
import io
from xml.sax.saxutils import escape

COLORS = {"segmented": "#2f6db3", "pma": "#e08a1e", "redis": "#9b9b9b"}
LABELS = {"segmented": "goblin-core segmented", "pma": "goblin-core pma", "redis": "redis-server 7.0.15"}


def read_rows(path):
    with open(path) as f:
        text = f.read()
    block = text.split("\n\n")[0]
    data = {}
    order = []
    for row in csv.DictReader(io.StringIO(block)):
        op = row["operation"]
        if op not in data:
            data[op] = {}
            order.append(op)
        data[op][row["backend"]] = float(row["commands_per_sec"])
    return order, data


def nice_max(v):
    step = 0.5e6
    m = step
    while m < v:
        m += step
    return m


def chart(order, data, title):
    backends = [b for b in ("segmented", "pma", "redis") if any(b in data[op] for op in order)]
    bar_h, gap, label_w, plot_w, top, right = 11, 10, 250, 560, 70, 90
    group_h = bar_h * len(backends) + gap
    height = top + group_h * len(order) + 40
    width = label_w + plot_w + right
    vmax = nice_max(max(v for op in order for v in data[op].values()))
    x = lambda v: label_w + plot_w * v / vmax  # noqa: E731
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="Helvetica, Arial, sans-serif" font-size="11">' % (width, height, width, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>' % (10, escape(title))]
    # legend
    lx = 10
    for b in backends:
        out.append('<rect x="%d" y="34" width="12" height="12" fill="%s"/>' % (lx, COLORS[b]))
        out.append('<text x="%d" y="44">%s</text>' % (lx + 16, escape(LABELS[b])))
        lx += 30 + 7 * len(LABELS[b])
    # grid
    t = 0.0
    while t <= vmax + 1:
        gx = x(t)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e3e3e3"/>' % (gx, top - 8, gx,
                                                                                      height - 32))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%gM</text>' % (gx, height - 18,
                                                                                         t / 1e6))
        t += 0.5e6
    out.append('<text x="%d" y="%d" text-anchor="middle" fill="#555">commands per second</text>' % (
        label_w + plot_w // 2, height - 4))
    y = top
    for op in order:
        out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (
            label_w - 8, y + group_h / 2 - gap / 2 + 4, escape(op)))
        for b in backends:
            v = data[op].get(b)
            if v is not None:
                out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (
                    label_w, y, x(v) - label_w, bar_h - 1, COLORS[b]))
                out.append('<text x="%.1f" y="%d" font-size="9" fill="#333">%.2fM</text>' % (
                    x(v) + 3, y + bar_h - 2, v / 1e6))
            y += bar_h
        y += gap
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("svg")
    ap.add_argument("--title", default="Goblin Core list work-queue benchmark (RESP2, Unix socket, pipeline 64)")
    a = ap.parse_args()
    order, data = read_rows(a.csv)
    with open(a.svg, "w") as f:
        f.write(chart(order, data, a.title))


if __name__ == "__main__":
    main()
