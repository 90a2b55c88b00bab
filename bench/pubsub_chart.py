#!/usr/bin/env python3
"""SVG chart of publish-to-receive latency (no plotting library).

    build-release/pubsub_ring_latency build-release/goblin-core --rounds 10 --samples 2000 --csv > ps.csv
    python3 bench/pubsub_chart.py ps.csv docs/img/pubsub.svg

Reads bench/pubsub_ring_latency.c's --csv (transport,subscribers,p50_first_ns,
p50_last_ns,p99_last_ns) and draws, for 1, 10 and 100 subscribers, the p50
time until the last subscriber holds the message, one bar per transport, on
a logarithmic axis (the transports differ by orders of magnitude); each bar
carries its value. The ring PING round trip of the same run is a dashed line.
"""

import argparse
import csv
import math
from xml.sax.saxutils import escape

COLORS = {"ring (SBE)": "#2f6db3", "goblin unix socket": "#7fa7d6", "redis unix socket": "#9b9b9b"}


def fmt_ns(ns):
    return "%.0f ns" % ns if ns < 1000 else "%.1f µs" % (ns / 1000) if ns < 1e6 else "%.2f ms" % (ns / 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("svg")
    ap.add_argument("--title", default="Pub/sub publish-to-receive, p50 until the last subscriber has it")
    a = ap.parse_args()
    rows, ping = [], None
    with open(a.csv) as f:
        for r in csv.DictReader(f):
            if r["transport"] == "ring PING":
                ping = float(r["p50_last_ns"])
            else:
                rows.append((r["transport"], int(r["subscribers"]), float(r["p50_last_ns"])))
    fans = sorted({n for _, n, _ in rows})
    kinds = [k for k in COLORS if any(t == k for t, _, _ in rows)]
    lo = 10 ** math.floor(math.log10(min(v for _, _, v in rows)))
    hi = 10 ** math.ceil(math.log10(max(v for _, _, v in rows)))
    left, width, bar, gap, top = 190, 480, 16, 18, 60

    def x(ns):
        return left + width * (math.log10(ns) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))

    height = top + len(fans) * (len(kinds) * bar + gap) + 50
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">'
           % (left + width + 110, height),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="22" font-size="15" font-weight="bold">%s</text>' % escape(a.title),
           '<text x="10" y="40" fill="#555">logarithmic axis; lower is better</text>']
    d = lo
    while d <= hi:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (x(d), top - 6, x(d), height - 34))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>' % (x(d), height - 20, fmt_ns(d)))
        d *= 10
    if ping:
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#c0392b" stroke-dasharray="4,3"/>'
                   % (x(ping), top - 10, x(ping), height - 34))
        out.append('<text x="%.1f" y="%d" fill="#c0392b" font-size="11">ring PING round trip %s</text>'
                   % (x(ping) + 4, top - 12, fmt_ns(ping)))
    y = top
    for n in fans:
        out.append('<text x="%d" y="%d" text-anchor="end" font-weight="bold">%d subscriber%s</text>'
                   % (left - 8, y + bar, n, "" if n == 1 else "s"))
        for k in kinds:
            v = next((v for t, m, v in rows if t == k and m == n), None)
            if v is not None:
                out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>'
                           % (left, y, max(x(v) - left, 1), bar - 3, COLORS[k]))
                out.append('<text x="%.1f" y="%d" font-size="11">%s  %s</text>' % (x(v) + 4, y + bar - 5, fmt_ns(v), escape(k)))
            y += bar
        y += gap
    out.append("</svg>")
    with open(a.svg, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
