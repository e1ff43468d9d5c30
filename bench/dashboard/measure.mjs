// Page weight and time to a complete first render of the dashboard from loopback: one
// `gpuwarden serve` on the demo fleet (8 GPUs), one headless Chromium over the DevTools pipe,
// RUNS fresh navigations (cache disabled). "Complete" = the server-rendered cards are there, the
// script has applied its first poll (body[data-updated]) and the four charts are in the page.
//   node bench/dashboard/measure.mjs build/release/gpuwarden build/release/fake-nvml/libnvidia-ml.so.1 . [RUNS]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Browser } from '../../tests/dashboard/cdp.mjs';

const [gpuwarden, fakeLib, sourceDir, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 20);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-dash-bench-'));
const port = 19000 + Math.floor(Math.random() * 1000);
const base = 'http://127.0.0.1:' + port;
fs.writeFileSync(path.join(tmp, 'gw.toml'),
  `[serve]\nlisten = "127.0.0.1:${port}"\n[storage]\npath = "${tmp}/h.db"\n[sampling]\ninterval = "200ms"\nkernel_log = ""\n`);
const daemon = spawn(gpuwarden, ['serve', '--demo', '--nvml-lib', fakeLib, '--config', path.join(tmp, 'gw.toml')],
  { stdio: 'ignore' });
const browser = Browser.launch(process.env.GW_CHROMIUM || '/usr/bin/chromium', path.join(tmp, 'c'));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
try {
  for (let i = 0; i < 100; ++i) {
    try { if ((await fetch(base + '/healthz')).status === 200) break; } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 3000));  // some history for the charts
  const page = await browser.newPage();
  await page.start(1280, 1400);
  await page.send('Network.enable');
  await page.send('Network.setCacheDisabled', { cacheDisabled: true });
  const bytes = new Map();
  browser.on((m) => {
    if (m.method === 'Network.loadingFinished') bytes.set(m.params.requestId, m.params.encodedDataLength);
  });
  const complete = [], html = [], load = [], weight = [];
  for (let i = 0; i < runs; ++i) {
    bytes.clear();
    await page.goto(base + '/');
    await page.waitFor(`document.body.dataset.updated && document.querySelectorAll('#charts svg').length === 4`);
    const t = await page.eval(`(() => { const n = performance.getEntriesByType('navigation')[0];
        const charts = performance.getEntriesByType('resource').filter(r => r.name.includes('chart.svg'));
        const last = Math.max(...performance.getEntriesByType('resource').map(r => r.responseEnd), n.loadEventEnd);
        return { html: n.responseEnd, load: n.loadEventEnd, complete: last }; })()`);
    await new Promise((r) => setTimeout(r, 300));
    html.push(t.html); load.push(t.load); complete.push(t.complete);
    weight.push([...bytes.values()].reduce((a, b) => a + b, 0));
  }
  const kb = (b) => (b / 1024).toFixed(1) + ' KB';
  const page1 = await (await fetch(base + '/')).text();
  const js = await (await fetch(base + '/dashboard.js')).text();
  const css = await (await fetch(base + '/dashboard.css')).text();
  console.log(`runs ${runs}`);
  console.log(`first load over the wire (HTML, CSS, JS, 4 charts, API polls until complete): median ${kb(median(weight))}, max ${kb(Math.max(...weight))}`);
  console.log(`  of which page ${kb(page1.length)}, dashboard.js ${kb(js.length)}, dashboard.css ${kb(css.length)}`);
  console.log(`HTML received: median ${median(html).toFixed(1)} ms; load event: median ${median(load).toFixed(1)} ms`);
  console.log(`complete first render (cards, first poll applied, 4 charts): median ${median(complete).toFixed(1)} ms, max ${Math.max(...complete).toFixed(1)} ms`);
} finally {
  await browser.close();
  daemon.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}
