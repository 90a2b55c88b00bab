#!/usr/bin/env python3
"""SVG chart of the persistence benchmark (no plotting library).

    /usr/bin/python3 bench/persistence_benchmark.py --goblin build-release/goblin-core --gb 2 --trials 3 --csv p.csv
    python3 bench/persistence_chart.py p.csv docs/img/persistence.svg

Reads the benchmark's --csv (row,goblin,redis) and draws, per row, goblin-core
against redis-server with Redis's bar at 1.0: each row's label says whether
more or less is better, and each bar carries its measured value.
"""

import argparse
import csv
from xml.sax.saxutils import escape

# csv row -> (label, unit format, higher is better)
ROWS = [
    ("file_mb", "snapshot file size", "{:.0f} MB", False),
    ("save_mbs", "SAVE throughput", "{:.0f} MB/s", True),
    ("load_mbs", "load throughput", "{:.0f} MB/s", True),
    ("save2_mbs", "SAVE throughput, helper core", "{:.0f} MB/s", True),
    ("load2_mbs", "load throughput, helper core", "{:.0f} MB/s", True),
    ("peak_ratio", "BGSAVE peak memory / before", "{:.2f}x", False),
    ("p99_ratio", "write p99 during BGSAVE / without", "{:.2f}x", False),
    ("aof_everysec", "AOF everysec, SET -P 16", "{:,.0f}/s", True),
    ("aof_always", "AOF always, SET -P 16", "{:,.0f}/s", True),
]
COLORS = {"goblin": "#2f6db3", "redis": "#9b9b9b"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("svg")
    ap.add_argument("--title", default="Persistence: goblin-core vs redis-server 7.0 (Redis = 1.0)")
    a = ap.parse_args()
    with open(a.csv) as f:
        data = {r["row"]: (float(r["goblin"]), float(r["redis"])) for r in csv.DictReader(f)}
    rows = [r for r in ROWS if r[0] in data]
    left, width, bar, gap = 270, 420, 14, 16
    top = 50
    height = top + len(rows) * (2 * bar + gap) + 40
    scale_max = max(max(g / r for g, r in (data[k] for k, *_ in rows)), 1.0) * 1.15
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (left + width + 120, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>' % escape(a.title)]
    x1 = left + width / scale_max
    out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#444" stroke-dasharray="4,3"/>'
               % (x1, top - 8, x1, height - 30))
    out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#444">1.0 (Redis)</text>' % (x1, height - 14))
    y = top
    for key, label, fmt, higher in rows:
        g, r = data[key]
        better = "more is better" if higher else "less is better"
        out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (left - 8, y + bar, escape(label)))
        out.append('<text x="%d" y="%d" text-anchor="end" fill="#777" font-size="10">%s</text>'
                   % (left - 8, y + 2 * bar + 2, better))
        for i, (kind, v) in enumerate((("goblin", g), ("redis", r))):
            w = width * (v / r) / scale_max
            yy = y + i * bar
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (left, yy, w, bar - 2,
                                                                                   COLORS[kind]))
            out.append('<text x="%.1f" y="%d" font-size="11">%s</text>' % (left + w + 4, yy + bar - 4,
                                                                          escape(fmt.format(v))))
        y += 2 * bar + gap
    lx = left
    for kind, name in (("goblin", "goblin-core"), ("redis", "redis-server 7.0")):
        out.append('<rect x="%d" y="32" width="12" height="10" fill="%s"/>' % (lx, COLORS[kind]))
        out.append('<text x="%d" y="41">%s</text>' % (lx + 16, name))
        lx += 140
    out.append("</svg>")
    with open(a.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
