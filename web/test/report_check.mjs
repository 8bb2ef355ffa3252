// Opens vouch's HTML reports in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core; no browser is downloaded) and asserts what is drawn: every chart drew
// points, the verdict text is on the page, no console error, no request left the file.
// Saves a screenshot of each page.
//
// usage: node web/test/report_check.mjs --out DIR [--draw-times] NAME=FILE.html:VERDICT...
// Exit 0 all good, 1 a check failed, 77 (skip) when Chromium or playwright-core is missing
// and VOUCH_REQUIRE_BROWSER is unset (scripts/test.sh sets it: then missing is a failure).
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const chromium_path = process.env.VOUCH_CHROMIUM || "/usr/bin/chromium";
const args = process.argv.slice(2);
let out = ".";
const pages = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--out") out = args[++i];
  else {
    const eq = args[i].indexOf("=");
    const rest = args[i].slice(eq + 1);
    const colon = rest.lastIndexOf(":");
    pages.push({ name: args[i].slice(0, eq), file: rest.slice(0, colon), verdict: rest.slice(colon + 1) });
  }
}

function missing(what) {
  if (process.env.VOUCH_REQUIRE_BROWSER) {
    console.error(`report_check: FAIL: ${what} (VOUCH_REQUIRE_BROWSER is set)`);
    process.exit(1);
  }
  console.error(`report_check: skipped: ${what}`);
  process.exit(77);
}

if (!existsSync(chromium_path)) missing(`no Chromium at ${chromium_path} (apt-get install chromium)`);
let playwright;
try {
  playwright = createRequire(path.join(here, "..", "package.json"))("playwright-core");
} catch (e) {
  missing("playwright-core is not installed (npm ci in web/, scripts/setup.sh does it)");
}

mkdirSync(out, { recursive: true });
const browser = await playwright.chromium.launch({
  executablePath: chromium_path,
  headless: true,
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const failed = new Set();
const fail = (page, what) => {
  failed.add(page.name);
  console.error(`report_check: FAIL ${page.name}: ${what}`);
};
try {
  for (const p of pages) {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const errors = [], requests = [];
    page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
    page.on("pageerror", (e) => errors.push(String(e)));
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith("file:") || url.startsWith("data:")) return route.continue();
      requests.push(url);
      return route.abort();
    });
    const t0 = Date.now();
    await page.goto(pathToFileURL(path.resolve(p.file)).href);
    try {
      await page.waitForSelector("body[data-drawn]", { timeout: 60000, state: "attached" });
    } catch (e) {
      fail(p, "the charts never finished drawing");
    }
    const wall_ms = Date.now() - t0;
    const st = await page.evaluate(() => {
      const described = {};
      for (const c of JSON.parse(document.getElementById("vouch-data").textContent).charts || [])
        described[c.id] = c;
      const charts = [...document.querySelectorAll(".chart")].map((el) => ({
        id: el.id, points: Number(el.getAttribute("data-points") || 0),
        canvas: !!el.querySelector("canvas"),
        kind: described[el.id]?.kind, ranges: described[el.id]?.ranges || {},
        fills: (el.getAttribute("data-fills") || "").split(","),
        yranges: Object.fromEntries((el.getAttribute("data-yranges") || "").split(",")
          .filter((x) => x).map((x) => { const [k, r] = x.split(":"); return [k, r.split("..").map(Number)]; })),
      }));
      return {
        v: window.__vouch, charts, verdict: document.getElementById("verdict")?.textContent,
        top: document.getElementById("top-finding")?.textContent,
      };
    });
    if (!st.v) fail(p, "the report script did not run");
    if (st.charts.length === 0) fail(p, "no chart on the page");
    for (const c of st.charts) {
      if (!c.canvas) fail(p, `${c.id}: no canvas`);
      if (c.points <= 0) fail(p, `${c.id}: no point plotted`);
    }
    for (const c of st.charts) {
      // A trend draws its attributed points filled (hollow means unattributed).
      if (c.kind === "trend" && c.fills[0] !== "filled") fail(p, `${c.id}: attributed points drawn ${c.fills[0]}`);
      // A fixed range (a leg's SM clock axis) is the one drawn, not uPlot's 0-based default.
      for (const [scale, r] of Object.entries(c.ranges)) {
        const got = c.yranges[scale];
        if (!got || got[0] !== Math.round(r[0]) || got[1] !== Math.round(r[1]))
          fail(p, `${c.id}: scale ${scale} drawn ${got ? got.join("..") : "?"}, expected ${r.join("..")}`);
      }
    }
    // A trace page leads with its top finding.
    if (p.name.startsWith("trace") && !st.top) fail(p, "no top finding on the trace page");
    if (p.verdict && st.verdict !== p.verdict) fail(p, `verdict "${st.verdict}", expected "${p.verdict}"`);
    if (errors.length) fail(p, `console errors: ${errors.join(" | ")}`);
    if (requests.length) fail(p, `requests left the file: ${requests.join(" ")}`);
    if (st.v && st.v.errors.length) fail(p, `chart errors: ${st.v.errors.join(" | ")}`);
    // A whole page of a thousand charts is too tall to capture in time: its first screen then.
    await page.screenshot({ path: path.join(out, `${p.name}.png`), fullPage: st.charts.length <= 50 });
    const total = st.charts.reduce((a, c) => a + c.points, 0);
    console.log(`report_check: ${p.name}: ${st.charts.length} charts, ${total} points, verdict "${st.verdict}", ` +
      `drawn in ${st.v ? st.v.draw_ms.toFixed(0) : "?"} ms (page load to drawn ${wall_ms} ms)`);
    await context.close();
  }
} finally {
  await browser.close();
}
console.log(`${pages.length - failed.size} passed, ${failed.size} failed`);
process.exit(failed.size ? 1 : 0);
