"""Opens the page `digits --report` writes in Debian's headless chromium (chromium-driver,
python3-selenium), from its file:// URL with the network switched off, and checks:

  check_report_page.py --digits EXE --work DIR [--screenshot PNG]

- nothing is fetched (no resource loads, no script errors) and the charts draw offline;
- one series per run in each chart;
- hovering a point of the training-loss chart shows the mean of the CSV's losses there;
- a run's toggle hides it in every chart, and the log-axis box switches the loss axes.
Exit 0 passed, 1 failed, 77 skipped (chromium, chromedriver or selenium missing; a failure
under CI=true). --screenshot saves the page as drawn (docs/images/comparing-runs.png).
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def skip(reason):
    if os.environ.get("CI") == "true":
        sys.exit(f"check_report_page: error: {reason}, and CI runs every test")
    print(f"check_report_page: skipped: {reason}")
    sys.exit(77)


def browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        skip("chromium or chromedriver is not on PATH (apt-get install -y chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip(f"{sys.executable} has no selenium (apt-get install -y python3-selenium)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,1500", "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
                 "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def mean_losses(curves_csv):
    """run -> step -> mean loss over the seeds."""
    values = defaultdict(lambda: defaultdict(list))
    with open(curves_csv, newline="") as f:
        for row in csv.DictReader(f):
            values[row["run"]][int(row["step"])].append(float(row["loss"]))
    return {run: {step: sum(v) / len(v) for step, v in steps.items()} for run, steps in values.items()}


def legend_values(text):
    """'12: none: 2.3026 batch: 1.0357' -> {'none': 2.3026, 'batch': 1.0357}."""
    return {name: float(value) for name, value in re.findall(r"([A-Za-z][\w-]*):\s*([-+0-9.eE]+)", text)}


def shown(value, digits=5):
    return float(f"{value:.{digits}g}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--digits", required=True, type=lambda p: Path(p).resolve())
    parser.add_argument("--work", required=True, type=lambda p: Path(p).resolve())
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    driver = browser()
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    args.work.mkdir(parents=True, exist_ok=True)
    page, curves = args.work / "report.html", args.work / "curves.csv"
    run = subprocess.run([args.digits, "--norm", "none,batch,layer", "--seeds", "0,1", "--epochs", "2", "--jobs", "1",
                          "--quiet", "--curves", curves, "--val-curves", args.work / "val.csv", "--report", page],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"check_report_page: digits exited {run.returncode}: {run.stderr}")
    expected = mean_losses(curves)
    failures = []

    def expect(ok, what):
        if not ok:
            failures.append(what)

    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                               {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
        driver.get(page.resolve().as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return !!window.minidlCharts"))
        charts = "window.minidlCharts"
        resources = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        expect(resources == [], f"the page fetched {resources}")
        errors = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        expect(errors == [], f"the page logged errors: {errors}")
        keys = driver.execute_script(f"return Object.keys({charts})")
        expect(keys == ["train_loss", "val_loss", "val_accuracy"], f"charts drawn: {keys}")
        for key in keys:
            labels = driver.execute_script(f"return {charts}.{key}.getLabels()")
            expect(labels == ["step", *expected], f"{key} draws {labels[1:]}, the CSV has runs {list(expected)}")

        # Hover over the middle of the batch run's curve: the legend shows every run's mean there.
        step = sorted(expected["batch"])[len(expected["batch"]) // 2]
        x, y, width, height = driver.execute_script(
            f"const g = {charts}.train_loss; const div = g.graphDiv;"
            f"return [g.toDomXCoord({step}), g.toDomYCoord({expected['batch'][step]}), div.offsetWidth, div.offsetHeight]")
        graph = driver.find_element(By.ID, "chart-train_loss")
        inner = driver.execute_script(f"return {charts}.train_loss.graphDiv", graph)
        ActionChains(driver).move_to_element_with_offset(inner, int(x - width / 2), int(y - height / 2)).perform()
        WebDriverWait(driver, 10).until(lambda d: d.execute_script(f"return {charts}.train_loss.getSelection() >= 0"))
        row = driver.execute_script(f"return {charts}.train_loss.getSelection()")
        hovered = driver.execute_script(f"return {charts}.train_loss.getValue({row}, 0)")
        legend = legend_values(driver.find_element(By.ID, "legend-train_loss").text)
        expect(hovered in expected["batch"], f"the hover selected step {hovered}")
        for run_name, steps in expected.items():
            want = shown(steps.get(hovered, float("nan")))
            expect(legend.get(run_name) == want,
                   f"hovering step {hovered} shows {run_name} {legend.get(run_name)}, the CSV's mean is {want}")

        # The batch run's toggle hides it everywhere; the others stay.
        driver.find_element(By.ID, "run-1").click()
        for key in keys:
            visible = driver.execute_script(f"return {charts}.{key}.visibility()")
            expect(visible == [True, False, True], f"after the batch toggle {key} shows {visible}")
        ActionChains(driver).move_by_offset(3, 0).perform()
        expect("batch" not in legend_values(driver.find_element(By.ID, "legend-train_loss").text),
               "the hidden batch run still shows in the legend")
        driver.find_element(By.ID, "log-scale").click()
        expect(driver.execute_script(f"return {charts}.train_loss.getOption('logscale')") is True,
               "the log-axis box did not switch the loss axis")
        if args.screenshot:
            driver.find_element(By.ID, "run-1").click()
            driver.find_element(By.ID, "log-scale").click()
            args.screenshot.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(args.screenshot))
    finally:
        driver.quit()
    if failures:
        print("\n".join(failures))
        sys.exit(f"check_report_page: {len(failures)} checks failed")
    print("check_report_page: the page draws offline, hovers the CSV's values and toggles its runs")


if __name__ == "__main__":
    main()
