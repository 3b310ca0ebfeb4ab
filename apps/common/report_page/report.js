// Draws the runs of the page's data (#report-data) with dygraphs: per run name one series,
// the mean over its seeds with the lowest and highest seed as a band (customBars).
// window.minidlCharts holds the charts by name, for the browser test.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const names = [...new Set(data.runs.map((run) => run.name))];

  // One row per step: [step, [low, mean, high] per name]; null where a name has no value.
  function bandRows(pointsOf) {
    const byStep = new Map();
    names.forEach((name, column) => {
      for (const run of data.runs.filter((r) => r.name === name)) {
        for (const [step, value] of pointsOf(run)) {
          if (value === null || value === undefined) continue;
          if (!byStep.has(step)) byStep.set(step, names.map(() => []));
          byStep.get(step)[column].push(value);
        }
      }
    });
    return [...byStep.keys()].sort((a, b) => a - b).map((step) => [step, ...byStep.get(step).map((values) => {
      if (values.length === 0) return null;
      const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
      return [Math.min(...values), mean, Math.max(...values)];
    })]);
  }

  const zip = (steps, values) => (values ? steps.map((step, i) => [step, values[i]]) : []);
  const charts = {};
  const chartsDiv = document.getElementById("charts");

  function addChart(key, title, yLabel, rows, isLoss) {
    if (rows.length === 0) return;
    const heading = document.createElement("h2");
    heading.textContent = title;
    const div = document.createElement("div");
    div.className = "chart";
    div.id = "chart-" + key;
    const legend = document.createElement("div");
    legend.className = "legend";
    legend.id = "legend-" + key;
    chartsDiv.append(heading, legend, div);
    charts[key] = new Dygraph(div, rows, {
      labels: ["step", ...names],
      customBars: true,
      xlabel: "step",
      ylabel: yLabel,
      legend: "always",
      labelsDiv: legend,
      labelsSeparateLines: false,
      drawPoints: rows.length < 50,
      connectSeparatedPoints: true,
      axes: { y: { valueFormatter: (v) => Number(v.toPrecision(5)).toString() } },
    });
    charts[key].isLoss = isLoss;
  }

  addChart("train_loss", "Training loss per step", "loss", bandRows((run) => zip(run.step, run.loss)), true);
  addChart("val_loss", "Validation loss per evaluation", "loss", bandRows((run) => zip(run.val_step, run.val_loss)), true);
  addChart("val_accuracy", "Validation accuracy per evaluation", "accuracy",
    bandRows((run) => zip(run.val_step, run.val_accuracy)), false);

  const runsDiv = document.getElementById("runs");
  names.forEach((name, column) => {
    const label = document.createElement("label");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = true;
    box.id = "run-" + column;
    box.addEventListener("change", () => Object.values(charts).forEach((g) => g.setVisibility(column, box.checked)));
    label.append(box, " " + name);
    runsDiv.append(label);
  });
  document.getElementById("log-scale").addEventListener("change", (event) => {
    for (const g of Object.values(charts)) if (g.isLoss) g.updateOptions({ logscale: event.target.checked });
  });
  document.getElementById("results").textContent = data.table;
  window.minidlCharts = charts;
})();
