"""Measure the HTML report's overview at a regulator's size (issue 29): 5
sites, 5,000 tables, 100,000 findings. Renders the page
(`tests/report/regulator_scale.py` builds the audit), opens it in headless
Chromium and prints the first paint, DOMContentLoaded, and the time a site
link and a staff link take to filter the findings. Not a test: prints, asserts
nothing. Needs Playwright and a chromium binary (AUDITOR_CHROMIUM, or
`chromium` on PATH).

    python benchmarks/html_overview.py [--tables 5000] [--findings 100000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FILTER = """(selector) => new Promise((done) => {
  const t0 = performance.now();
  const link = document.querySelector(selector);
  const out = document.getElementById('shown-count');
  const was = out.textContent;
  link.click();
  const wait = () => out.textContent !== was ? done(performance.now() - t0)
                                                : requestAnimationFrame(wait);
  wait();
})"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=5000)
    ap.add_argument("--findings", type=int, default=100_000)
    args = ap.parse_args()
    chromium = os.environ.get("AUDITOR_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        sys.exit("no chromium binary: set AUDITOR_CHROMIUM or install chromium")
    sys.path.insert(0, str(HERE.parent / "tests" / "report"))
    sys.path.insert(0, str(HERE.parent / "tests"))
    from playwright.sync_api import sync_playwright
    from regulator_scale import regulator_scale

    from auditor.report.html import render_html
    from auditor.report.provenance import provenance

    with tempfile.TemporaryDirectory() as tmp:
        start = time.process_time()
        result = regulator_scale(Path(tmp), tables=args.tables, findings=args.findings)
        page_path = Path(tmp) / "report.html"
        page_path.write_text(render_html(result, provenance(result)), encoding="utf-8")
        print(f"built and rendered: {time.process_time() - start:.1f} s CPU, "
              f"{page_path.stat().st_size / 1e6:.1f} MB")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(page_path.as_uri(), wait_until="load")
            paint = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0]"
                                  " || {startTime: NaN}).startTime")
            loaded = page.evaluate("performance.getEntriesByType('navigation')[0]"
                                   ".domContentLoadedEventEnd")
            site = page.evaluate(FILTER, '#overview a[href^="#site="]')
            staff = page.evaluate(FILTER, '#overview a[href^="#staff="]')
            browser.close()
    print(f"first contentful paint {paint:.0f} ms; DOMContentLoaded {loaded:.0f} ms; "
          f"site filter {site:.0f} ms; staff filter {staff:.0f} ms")


if __name__ == "__main__":
    main()
