#!/usr/bin/env python3
"""The page `kiln view` writes, driven in headless Chromium (Debian's chromium,
chromium-driver and python3-selenium): a sample graph with --rewritten (search, tooltip,
collapse, an inner graph, pan and zoom, the passes list linking both panes), a generated graph
of about 3,000 nodes (load time, search, zoom), and a graph whose names are HTML and script
(they must stay text). Every page must load without a console message of level SEVERE and
without fetching anything. Screenshots go to --artifacts.

Exit code 77 (ctest: skipped) when Chromium, its driver or Selenium is not installed."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def skip(why):
    print("browser test skipped: " + why + " (scripts/setup installs chromium, chromium-driver, python3-selenium)")
    sys.exit(77)


try:
    from selenium import webdriver
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    skip("python3-selenium is not installed")

sys.path.insert(0, HERE)
import make_graph  # noqa: E402

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def run_kiln(kiln, args):
    started = time.monotonic()
    r = subprocess.run([kiln, "view"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        raise SystemExit("kiln view failed: " + " ".join(args))
    print("  " + r.stdout.strip() + " (%.1f s)" % (time.monotonic() - started))


def make_driver():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        skip("chromium or chromedriver is not installed")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,900", "--host-resolver-rules=MAP * ~NOTFOUND", "--disable-extensions"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)


def load(driver, path):
    started = time.monotonic()
    driver.get("file://" + os.path.abspath(path))
    WebDriverWait(driver, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    return time.monotonic() - started


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def page_checks(driver, name):
    errors = console_errors(driver)
    check(not errors, name + ": no console errors" + ("" if not errors else ": " + json.dumps(errors)[:500]))
    fetched = driver.execute_script("return performance.getEntriesByType('resource').length")
    check(fetched == 0, name + ": nothing fetched (%d resources)" % fetched)


def pane(driver, k):
    return driver.find_elements(By.CSS_SELECTOR, ".pane svg")[k]


def nodes(driver, k, selector=""):
    return pane(driver, k).find_elements(By.CSS_SELECTOR, ".viewport > .graph > .nodes > .node" + selector)


def transform(driver, k):
    return pane(driver, k).find_element(By.CSS_SELECTOR, ".viewport").get_attribute("transform")


def search(driver, text):
    box = driver.find_element(By.ID, "search")
    box.clear()
    box.send_keys(text)
    box.send_keys(Keys.ENTER)
    return driver.find_element(By.ID, "count").text


def test_sample(driver, kiln, source, work, artifacts):
    graph = os.path.join(source, "samples", "logistic_regression", "loss.json")
    page = os.path.join(work, "loss.html")
    run_kiln(kiln, [graph, "--rewritten", "-o", page])
    seconds = load(driver, page)
    print("  loaded in %.2f s" % seconds)
    data = json.loads(driver.execute_script("return document.getElementById('kiln-data').textContent"))
    check(len(driver.find_elements(By.CSS_SELECTOR, ".pane")) == 2, "sample: two panes (as written, after rewrites)")
    before = data["graphs"][data["panes"][0]["graph"]]
    check(len(nodes(driver, 0)) == len(before["nodes"]), "sample: every vertex is drawn (%d)" % len(before["nodes"]))

    # Search by op: the Dot, which the details name by its JSON pointer.
    count = search(driver, "Dot")
    check(count.startswith("1 of "), "sample: search 'Dot' finds it (%s)" % count)
    details = driver.find_element(By.ID, "details").text
    check("/nodes/0 Dot" in details, "sample: the selected Dot shows its JSON pointer /nodes/0")
    check(len(nodes(driver, 0, ".up")) > 0 and len(nodes(driver, 0, ".down")) > 0,
          "sample: selecting highlights its inputs and what it feeds")
    check(len(nodes(driver, 1, ".linked")) > 0, "sample: the rewritten pane outlines what stands for the Dot")
    check(search(driver, "/nodes/0").startswith("1 of "), "sample: search by JSON pointer")
    check(search(driver, "no such thing") == "no match", "sample: a search without matches says so")
    search(driver, "")

    # Tooltip: types and static shapes of a node's values.
    driver.find_element(By.ID, "fit").click()
    target = nodes(driver, 0, ".k-op")[0]
    ActionChains(driver).move_to_element(target).perform()
    tip = driver.find_element(By.ID, "tooltip")
    WebDriverWait(driver, 5).until(lambda d: tip.is_displayed())
    check("float64" in tip.text and "shape=" in tip.text and "/nodes/" in tip.text,
          "sample: the tooltip shows types, shapes and the pointer: " + tip.text.replace("\n", " | ")[:160])
    ActionChains(driver).move_to_element(driver.find_element(By.ID, "search")).perform()

    # Collapse what only feeds the output "loss", then expand it again.
    out = [n for n in nodes(driver, 0, ".k-out")][0]
    visible = len([n for n in nodes(driver, 0) if "hidden" not in n.get_attribute("class")])
    ActionChains(driver).double_click(out).perform()
    hidden = len(nodes(driver, 0, ".hidden"))
    check(hidden > 0 and len(nodes(driver, 0, ".collapsed")) == 1,
          "sample: double-click collapses %d nodes into the output" % hidden)
    check(len(pane(driver, 0).find_elements(By.CSS_SELECTOR, ".badge")) == 1, "sample: the collapsed node has a badge")
    driver.save_screenshot(os.path.join(artifacts, "view_sample_collapsed.png"))
    ActionChains(driver).double_click(out).perform()
    check(len([n for n in nodes(driver, 0) if "hidden" not in n.get_attribute("class")]) == visible,
          "sample: double-click again expands it")

    # An inner graph: a fused Composite of the rewritten pane.
    inner = nodes(driver, 1, ".has-inner")
    check(len(inner) > 0, "sample: the rewritten graph has fused Composites (%d)" % len(inner))
    if inner:
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))", inner[0])
        frames = pane(driver, 1).find_elements(By.CSS_SELECTOR, ".overlays .graph")
        inner_nodes = pane(driver, 1).find_elements(By.CSS_SELECTOR, ".overlays .node")
        check(len(frames) == 1 and len(inner_nodes) > 2, "sample: the Composite opens its inner graph (%d nodes)" % len(inner_nodes))
        driver.save_screenshot(os.path.join(artifacts, "view_sample_inner.png"))
        pane(driver, 1).find_element(By.CSS_SELECTOR, ".overlays [data-close]").click()
        check(not pane(driver, 1).find_elements(By.CSS_SELECTOR, ".overlays .graph"), "sample: and closes it")

    # What each pass replaced: a row turning the Dot into a Gemv links both panes.
    rows = [r for r in driver.find_elements(By.CSS_SELECTOR, "#passes .change") if "Dot" in r.text and "Gemv" in r.text]
    check(len(rows) > 0, "sample: the passes list shows the Dot replaced by a Gemv")
    if rows:
        rows[0].click()
        check(len(nodes(driver, 0, ".linked")) > 0 and len(nodes(driver, 1, ".linked")) > 0,
              "sample: clicking it outlines the nodes involved in both panes")

    # Pan and zoom.
    t0 = transform(driver, 0)
    svg = pane(driver, 0)
    driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "arguments[0].dispatchEvent(new WheelEvent('wheel', {deltaY: -300, clientX: r.left + 50, clientY: r.top + 50, bubbles: true, cancelable: true}))",
        svg)
    t1 = transform(driver, 0)
    check(t1 != t0 and scale_of(t1) > scale_of(t0), "sample: the wheel zooms in (%s -> %s)" % (t0, t1))
    x, y = background_point(driver, svg)
    ActionChains(driver).move_to_element_with_offset(svg, x, y).click_and_hold().move_by_offset(80, 40).release().perform()
    t2 = transform(driver, 0)
    check(t2 != t1 and scale_of(t2) == scale_of(t1), "sample: dragging the background pans (%s)" % t2)
    driver.find_element(By.ID, "fit").click()
    page_checks(driver, "sample")
    shot = os.path.join(artifacts, "view_sample.png")
    driver.save_screenshot(shot)
    print("  screenshot: " + shot)


# A point of the pane's background (no node under it), as an offset from the pane's centre.
def background_point(driver, svg):
    return driver.execute_script("""
        const svg = arguments[0], r = svg.getBoundingClientRect();
        for (let y = r.top + 10; y < r.bottom - 60; y += 15)
          for (let x = r.left + 10; x < r.right - 100; x += 15)
            if (document.elementFromPoint(x, y) === svg)
              return [Math.round(x - r.left - r.width / 2), Math.round(y - r.top - r.height / 2)];
        return [0, 0];""", svg)


def scale_of(t):
    return float(t.split("scale(")[1].rstrip(")")) if t and "scale(" in t else 1.0


def test_big(driver, kiln, work, artifacts, n_nodes):
    graph = os.path.join(work, "big.json")
    with open(graph, "w") as f:
        json.dump(make_graph.make(n_nodes), f)
    page = os.path.join(work, "big.html")
    run_kiln(kiln, [graph, "-o", page])
    size = os.path.getsize(page)
    seconds = load(driver, page)
    draw_ms = driver.execute_script("return window.kilnView.loadMs")
    drawn = len(nodes(driver, 0))
    print("  %d-node graph: page %.0f KiB, loaded in %.2f s (script %.0f ms), %d vertices drawn"
          % (n_nodes, size / 1024, seconds, draw_ms, drawn))
    check(drawn >= n_nodes, "big: all %d nodes drawn (%d vertices)" % (n_nodes, drawn))
    generated = make_graph.make(n_nodes)
    names = sorted(v["name"] for v in generated["variables"] if v.get("name", "").startswith("h"))
    name = names[len(names) // 2]
    count = search(driver, name)
    check(count == "1 of 1", "big: search by name finds %s (%s)" % (name, count))
    check(name in driver.find_element(By.ID, "details").text, "big: and selects it")
    count = search(driver, "Dot")
    dots = sum(1 for n in generated["nodes"] if n["op"] == "Dot")
    check(count.endswith(" of %d" % dots), "big: search by op finds all %d Dots (%s)" % (dots, count))
    driver.find_element(By.ID, "fit").click()
    check("far" in pane(driver, 0).get_attribute("class"), "big: fitted, the whole graph is drawn without labels")
    page_checks(driver, "big")
    shot = os.path.join(artifacts, "view_big.png")
    driver.save_screenshot(shot)
    print("  screenshot: " + shot)
    return size, seconds, draw_ms


def test_hostile(driver, kiln, work):
    evil = "</script><script>alert(1)</script>"
    img = "<img src=x onerror=alert(2)>"
    graph = {"format": "kiln-graph", "version": 1, "name": evil,
             "variables": [{"id": evil, "name": evil, "type": {"dtype": "float64", "shape": [None]}},
                           {"id": "y", "name": img, "type": {"dtype": "float64", "shape": [None]}}],
             "nodes": [{"op": "exp", "inputs": [evil], "outputs": ["y"]}],
             "inputs": [evil], "outputs": ["y"]}
    path = os.path.join(work, "hostile.json")
    with open(path, "w") as f:
        json.dump(graph, f)
    page = os.path.join(work, "hostile.html")
    run_kiln(kiln, [path, "-o", page])
    load(driver, page)
    try:
        driver.switch_to.alert
        alerted = True
    except NoAlertPresentException:
        alerted = False
    check(not alerted, "hostile: no script from the graph runs")
    check(driver.find_element(By.ID, "title").text == evil, "hostile: the name shows as text")
    check(not driver.find_elements(By.TAG_NAME, "img"), "hostile: no element made from a name")
    check(search(driver, "onerror").startswith("1 of"), "hostile: names are searchable text")
    page_checks(driver, "hostile")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--source", required=True, help="kiln's source folder")
    ap.add_argument("--work", required=True, help="folder for the pages")
    ap.add_argument("--artifacts", required=True, help="folder for the screenshots")
    ap.add_argument("--nodes", type=int, default=3000)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.artifacts, exist_ok=True)
    started = time.monotonic()
    driver = make_driver()
    try:
        print("sample graph (--rewritten):")
        test_sample(driver, args.kiln, args.source, args.work, args.artifacts)
        print("generated graph:")
        test_big(driver, args.kiln, args.work, args.artifacts, args.nodes)
        print("hostile names:")
        test_hostile(driver, args.kiln, args.work)
    finally:
        driver.quit()
    print("browser test: %d failure(s), %.1f s" % (len(failures), time.monotonic() - started))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
