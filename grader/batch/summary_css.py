"""The class page's style sheet (inline in summary.html: the page loads nothing).

System fonts only; light by default, dark when the reader's system asks for it.
"""

from __future__ import annotations

CSS = """
:root {
  --bg: #f6f7f9; --panel: #ffffff; --ink: #1d2330; --muted: #5b6475; --line: #e2e5ea;
  --accent: #3b6fd8; --ok: #2e9d5b; --wa: #e08a1e; --err: #d64545; --nj: #8a8f99; --track: #edf0f4;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #14171c; --panel: #1c2028; --ink: #e6e9ef; --muted: #9aa3b2; --line: #2c323d;
    --accent: #6b95ea; --track: #262b35;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
main { max-width: 1120px; margin: 0 auto; padding: 28px 24px 48px; }
h1 { font-size: 26px; margin: 0 0 6px; letter-spacing: -0.01em; }
h2 { font-size: 18px; margin: 0 0 12px; }
header { margin-bottom: 18px; }
.lede { margin: 2px 0; color: var(--muted); }
.notice {
  background: #fff4e0; color: #7a4a00; border: 1px solid #f0c987; border-radius: 8px; padding: 8px 12px;
}
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 12px; margin-top: 16px; }
.card {
  background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px;
  border-top: 4px solid var(--accent);
}
.card b { display: block; font-size: 26px; line-height: 1.2; }
.card span { color: var(--muted); font-size: 13px; }
.card.good { border-top-color: var(--ok); }
.card.bad { border-top-color: var(--err); }
section {
  background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 18px 20px;
  margin: 16px 0;
}
.note { color: var(--muted); margin-top: 0; }
table { border-collapse: collapse; width: 100%; }
th, td {
  text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top;
  overflow-wrap: break-word;
}
th {
  white-space: nowrap; font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted);
  font-weight: 600;
}
tbody tr:hover { background: var(--track); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td:last-child:has(svg.meter) { width: 30%; }
.wide { overflow-x: auto; }
#students td { font-size: 13.5px; }
#students td:first-child, #students td:nth-child(3) { white-space: nowrap; }
#students td:nth-child(2) { max-width: 16em; overflow-wrap: anywhere; }
#students tr:not(.message) td { border-bottom: none; padding-bottom: 0; }
#students tr.message td { color: var(--muted); font-size: 12.5px; padding-top: 2px; white-space: normal; }
#students tbody tr:hover { background: none; }
code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--track);
  padding: 1px 5px; border-radius: 4px; white-space: nowrap; }
small { color: var(--muted); }
td small { display: block; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
ul { margin: 0; padding-left: 20px; }
li { margin: 3px 0; }
.badge {
  display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 12.5px; font-weight: 600;
  color: #fff; background: var(--err); white-space: nowrap;
}
.badge.ok { background: var(--ok); }
.badge.wa { background: var(--wa); }
.badge.nj { background: var(--nj); }
svg.meter { width: 100%; min-width: 120px; height: 12px; display: block; margin-top: 5px; }
svg.meter .track { fill: var(--track); }
svg.meter .fill { fill: var(--accent); }
svg.meter .fill.ok { fill: var(--ok); }
svg.meter .fill.wa { fill: var(--wa); }
svg.meter .fill.err { fill: var(--err); }
svg.meter .fill.nj { fill: var(--nj); }
figure { margin: 0; }
svg.histogram { width: 100%; max-width: 820px; height: auto; display: block; }
svg.histogram .bar { fill: var(--accent); }
svg.histogram .bar.full { fill: var(--ok); }
svg.histogram .bar.zero { fill: var(--err); }
svg.histogram .bar:hover { opacity: 0.8; }
svg.histogram .axis { stroke: var(--muted); stroke-width: 1; }
svg.histogram text { fill: var(--ink); font-size: 13px; text-anchor: middle; }
svg.histogram .label, svg.histogram .axis-title { fill: var(--muted); }
"""
