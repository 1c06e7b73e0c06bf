// What the table panels of a Grafana dashboard show, computed from a live Prometheus the way
// Grafana computes them, and checked: the per-GPU table (a table with a `gpu` column and no
// `container` column) must have exactly one row per GPU of the node, the per-container table (a
// table with a `container` column) exactly one row per container holding a GPU, with its pod's
// memory reservation, and no cell of either may be empty.
//
// usage: node dashboard_tables.mjs PROMETHEUS_URL DASHBOARD_JSON NODE [GRAFANA_DATA_DIR]
//   PROMETHEUS_URL    http://host:port of the Prometheus the dashboard's data source points at
//   NODE              the value of the dashboard's $node variable
//   GRAFANA_DATA_DIR  where scripts/install-deps.sh installed this folder's package-lock.json
//                     (default: $DXSHIM_GRAFANA_DATA, else /var/cache/dxshim/grafana-data)
// Prints each table as Grafana's table panel would get it (one markdown line per row), then each
// problem naming its panel. Exit status: 0 every table is right, 1 a table is wrong, 2 the test
// cannot run (packages missing, Prometheus unreachable, a query refused).
//
// The steps, for each table panel, and whose code each one is:
// 1. Grafana's backend (Go, pkg/promlib) runs each target as an instant query, every target of the
//    panel at the same time (POST /api/v1/query, query and time: QueryInstant in
//    pkg/promlib/client/client.go, commit e75b5e7dd36309964a1ec33494cc10c9fd2929d6), and makes one
//    data frame per series of the answer. STAND-IN below (promlibFrames), copied from
//    grafana/grafana pkg/promlib/converter/prom.go
//    (readMatrixOrVectorMulti, commit 1a4b5a61c01b248bad947f3a65e7f67a5a707c87) and
//    pkg/promlib/querydata/response.go (parseResponse, addMetadataToMultiFrame, commit
//    79378f21ea476af894c6812ec51cb5b3541d5ca4): a Time field and a number field whose labels are
//    the series' labels, __name__ included, named after __name__ when the series has one; an empty
//    frame when the answer has no series.
// 2. The browser reads the frames with dataFrameFromJSON (@grafana/data: Grafana's own code) and
//    gives each the refId of its target, in the targets' order. STAND-IN for toDataQueryResponse,
//    packages/grafana-runtime/src/utils/queryResponse.ts (commit
//    f765a6236aeeec247ed143bbf5e3d702bb387728), a loop around dataFrameFromJSON.
// 3. The Prometheus data source's transformV2 turns the frames of targets with format "table" into
//    one frame per refId: Time, one string field per label (__name__ included), and the value
//    field `Value #<refId>` (`Value` when only one refId answered). STAND-IN: transformDFToTable,
//    copied from packages/grafana-prometheus/src/result_transformer.ts (commit
//    61cabaec363cd9d172e28ce953fae0928bd47a14); @grafana/prometheus itself needs @grafana/ui and
//    @grafana/runtime, a browser's worth of packages.
// 4. The panel's own `transformations`: transformDataFrame with standardTransformersRegistry
//    holding standardTransformers, as Grafana's app registers them
//    (public/app/features/transformers/standardTransformers.ts): @grafana/data, Grafana's own code.
import fs from 'node:fs';
import http from 'node:http';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const [promUrl, dashboardFile, nodeName, dataDirArg] = process.argv.slice(2);
if (!promUrl || !dashboardFile || !nodeName) {
  console.error('usage: node dashboard_tables.mjs PROMETHEUS_URL DASHBOARD_JSON NODE [GRAFANA_DATA_DIR]');
  process.exit(2);
}
const dataDir = dataDirArg || process.env.DXSHIM_GRAFANA_DATA || '/var/cache/dxshim/grafana-data';

function cannotRun(message) {
  console.error(`cannot run: ${message}`);
  process.exit(2);
}

// --- @grafana/data, as scripts/install-deps.sh installed it (npm ci of this folder's lock file).
const wantedLock = fs.readFileSync(path.join(here, 'package-lock.json'));
let installedLock = null;
try {
  installedLock = fs.readFileSync(path.join(dataDir, 'package-lock.json'));
} catch {}
if (!installedLock || !installedLock.equals(wantedLock) ||
    !fs.existsSync(path.join(dataDir, 'node_modules/@grafana/data/package.json'))) {
  cannotRun(`the npm packages of tests/monitoring/package-lock.json (@grafana/data) are not ` +
            `installed in ${dataDir}, or another version is: run scripts/install-deps.sh`);
}
const requireFromData = createRequire(path.join(dataDir, 'package.json'));

// @grafana/data is written for a browser: its module creates a store that listens on `window`.
globalThis.window ??= { addEventListener() {} };
// Its CommonJS build (its `require` export) requires d3-interpolate, an ES module only. Node 20
// (from 20.19) loads an ES module with require(); Node 18 (Debian 12's) does not, so each module
// it refuses is imported first, and require() answers with what import() gave.
const preloaded = new Map();
const load = Module._load;
Module._load = function (request, parent, isMain) {
  let file = null;
  try {
    file = Module._resolveFilename(request, parent, isMain);
  } catch {}
  if (file && preloaded.has(file)) return preloaded.get(file);
  try {
    return load.apply(this, arguments);
  } catch (e) {
    if (e.code === 'ERR_REQUIRE_ESM' && file && !e.esModuleFile) e.esModuleFile = file;
    throw e;
  }
};
let grafana;
for (;;) {
  try {
    grafana = requireFromData('@grafana/data');
    break;
  } catch (e) {
    if (e.code !== 'ERR_REQUIRE_ESM' || !e.esModuleFile || preloaded.has(e.esModuleFile)) throw e;
    preloaded.set(e.esModuleFile, await import(pathToFileURL(e.esModuleFile).href));
    for (const key of Object.keys(requireFromData.cache)) delete requireFromData.cache[key];
  }
}
const {
  FieldType, TIME_SERIES_TIME_FIELD_NAME, TIME_SERIES_VALUE_FIELD_NAME, dataFrameFromJSON,
  getDisplayProcessor, getFieldDisplayName, sortDataFrame, standardTransformers,
  standardTransformersRegistry, transformDataFrame,
} = grafana;
const grafanaVersion = JSON.parse(
    fs.readFileSync(path.join(dataDir, 'node_modules/@grafana/data/package.json'), 'utf8')).version;

// Grafana's app: standardTransformersRegistry.setInit(getStandardTransformers), each item's
// `transformation` one of standardTransformers (seriesToColumns is joinByField under an old name).
const registered = new Map();
for (const t of Object.values(standardTransformers)) {
  registered.set(t.id, { id: t.id, name: t.name, description: t.description, transformation: t });
}
standardTransformersRegistry.setInit(() => [...registered.values()]);

// --- Prometheus' HTTP API, as Grafana's backend calls it (POST, form-encoded).
function post(apiPath, form) {
  const body = new URLSearchParams(form).toString();
  const url = new URL(apiPath, promUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded',
                 'Content-Length': Buffer.byteLength(body) },
    }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new Error(`${url}: HTTP ${res.statusCode}, not JSON: ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('error', reject);
    req.setTimeout(30000, () => req.destroy(new Error(`${url}: no answer in 30 s`)));
    req.end(body);
  });
}

async function instantQuery(expr, time) {
  let answer;
  try {
    answer = await post('/api/v1/query', { query: expr, time });
  } catch (e) {
    cannotRun(e.message);
  }
  if (answer.status !== 'success') cannotRun(`${expr}: ${answer.errorType}: ${answer.error}`);
  if (answer.data.resultType !== 'vector') {
    cannotRun(`${expr}: a ${answer.data.resultType}, not an instant vector`);
  }
  return answer;
}

// --- Step 1, STAND-IN for Grafana's backend: pkg/promlib/converter/prom.go
// readMatrixOrVectorMulti (one frame per series: Time, then a float64 field "Value" labelled with
// the series' labels; meta type timeseries-multi, custom.resultType) and
// pkg/promlib/querydata/response.go parseResponse (an empty frame when there is no series) and
// addMetadataToMultiFrame (the value field renamed after the series' __name__). The frames as the
// Go SDK writes them to the browser (data.FrameToJSON: schema and values; NaN and ±Inf as null
// with an `entities` entry). Field configs (the Time field's interval, the value field's
// displayNameFromDS) are left out: transformDFToTable builds new fields without reading them,
// except the Time field's interval, which only sets the table's Time column's config.
function promlibFrames(answer) {
  const frames = [];
  for (const series of answer.data.result) {
    const labels = { ...series.metric };
    const [t, v] = series.value;
    const value = Number.parseFloat(v); // strconv.ParseFloat: "NaN", "+Inf" and "-Inf" too
    const entities = {};
    if (Number.isNaN(value)) entities.NaN = [0];
    else if (value === Infinity) entities.Inf = [0];
    else if (value === -Infinity) entities.NegInf = [0];
    frames.push({
      schema: {
        meta: { type: 'timeseries-multi', custom: { resultType: answer.data.resultType } },
        fields: [
          { name: 'Time', type: 'time', typeInfo: { frame: 'time.Time' } },
          { name: labels.__name__ ?? 'Value', type: 'number', typeInfo: { frame: 'float64' },
            labels },
        ],
      },
      data: {
        values: [[Math.trunc(t * 1000)], [Number.isFinite(value) ? value : null]],
        entities: [null, Object.keys(entities).length ? entities : null],
      },
    });
  }
  if (frames.length === 0) frames.push({ schema: { fields: [] }, data: { values: [] } });
  return frames;
}

// --- Step 3, STAND-IN: packages/grafana-prometheus/src/result_transformer.ts at commit
// 61cabaec363cd9d172e28ce953fae0928bd47a14, transformDFToTable and the helpers it calls, with the
// types taken out. Nothing else changed.
const INFINITY_SAMPLE_REGEX = /^[+-]?inf(?:inity)?$/i;

function transformDFToTable(dfs) {
  // If no dataFrames or if 1 dataFrames with no values, return original dataFrame
  if (dfs.length === 0 || (dfs.length === 1 && dfs[0].length === 0)) {
    return dfs;
  }

  // Group results by refId and process dataFrames with the same refId as 1 dataFrame
  const dataFramesByRefId = groupBy(dfs, 'refId');
  const refIds = Object.keys(dataFramesByRefId);

  const frames = refIds.map((refId) => {
    // Create timeField, valueField and labelFields
    const valueText = getValueText(refIds.length, refId);
    const valueField = getValueField({ data: [], valueName: valueText });
    const timeField = getTimeField([]);
    const labelFields = [];

    // Fill labelsFields with labels from dataFrames
    dataFramesByRefId[refId].forEach((df) => {
      const frameValueField = df.fields[1];
      const promLabels = frameValueField?.labels ?? {};

      Object.keys(promLabels)
        .sort()
        .forEach((label) => {
          // If we don't have label in labelFields, add it
          if (!labelFields.some((l) => l.name === label)) {
            labelFields.push({
              name: label,
              config: { filterable: true },
              type: FieldType.string,
              values: [],
            });
          }
        });
    });

    let prevTime = -Infinity;
    let needsSort = false;

    // Fill valueField, timeField and labelFields with values
    dataFramesByRefId[refId].forEach((df) => {
      timeField.config.interval ??= df.fields[0]?.config.interval;

      const timeFields = df.fields[0]?.values ?? [];
      const dataFields = df.fields[1]?.values ?? [];

      timeFields.forEach((value) => {
        timeField.values.push(value);

        if (value < prevTime) {
          needsSort = true;
        }

        prevTime = value;
      });

      dataFields.forEach((value) => {
        valueField.values.push(parseSampleValue(value));
        const labelsForField = df.fields[1].labels ?? {};
        labelFields.forEach((field) => field.values.push(getLabelValue(labelsForField, field.name)));
      });
    });

    const fields = [timeField, ...labelFields, valueField];

    const frame = {
      refId,
      fields,
      // Prometheus specific UI for instant queries
      meta: {
        ...dataFramesByRefId[refId][0].meta,
        preferredVisualisationType: 'rawPrometheus',
      },
      length: timeField.values.length,
    };

    return needsSort ? sortDataFrame(frame, 0) : frame;
  });

  return frames;
}

function getValueText(responseLength, refId = '') {
  return responseLength > 1 ? `Value #${refId}` : 'Value';
}

function getLabelValue(metric, label) {
  if (metric.hasOwnProperty(label)) {
    return metric[label];
  }
  return '';
}

function getTimeField(data, isMs = false) {
  return {
    name: TIME_SERIES_TIME_FIELD_NAME,
    type: FieldType.time,
    config: {},
    values: data.map((val) => (isMs ? val[0] : val[0] * 1000)),
  };
}

function getValueField({
  data,
  valueName = TIME_SERIES_VALUE_FIELD_NAME,
  parseValue = true,
  labels,
  displayNameFromDS,
}) {
  return {
    name: valueName,
    type: FieldType.number,
    display: getDisplayProcessor(),
    config: {
      displayNameFromDS,
    },
    labels,
    values: data.map((val) => (parseValue ? parseSampleValue(val[1]) : val[1])),
  };
}

function parseSampleValue(value) {
  if (INFINITY_SAMPLE_REGEX.test(value)) {
    return value[0] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  return parseFloat(value);
}

// lodash's groupBy(collection, 'refId'), which result_transformer.ts imports.
function groupBy(items, key) {
  const groups = {};
  for (const item of items) (groups[item[key]] ??= []).push(item);
  return groups;
}

// --- The dashboard's variables in a query: $node, ${node}, ${node:format}, [[node]]. A single
// value goes in as it is (the Prometheus data source escapes regex characters only for multi-value
// and "include all" variables).
function interpolate(expr, where) {
  return expr.replace(/\$\{(\w+)(?::\w+)?\}|\[\[(\w+)(?::\w+)?\]\]|\$(\w+)/g, (all, a, b, c) => {
    const name = a || b || c;
    if (name === 'node') return nodeName;
    cannotRun(`${where}: variable $${name} has no value in this test`);
  });
}

// --- One table panel, steps 1 to 4.
async function panelTables(panel, time) {
  const where = `panel ${panel.id} "${interpolate(panel.title ?? '', `panel ${panel.id}`)}"`;
  const targets = (panel.targets ?? []).filter((t) => !t.hide);
  const log = [];
  const frames = [];
  for (const target of targets) {
    if (target.range && !target.instant) cannotRun(`${where}, ${target.refId}: a range query`);
    const expr = interpolate(target.expr ?? '', where);
    const answer = await instantQuery(expr, time);
    log.push(`  ${target.refId} (${target.format ?? 'time_series'}): ${expr}: ` +
             `${answer.data.result.length} series`);
    for (const js of promlibFrames(answer)) {
      const df = dataFrameFromJSON(js);
      if (!df.refId) df.refId = target.refId;
      frames.push(df);
    }
  }
  // transformV2: frames of format "table" targets through transformDFToTable, after the others.
  // (Its first step, for targets with legendFormat "__auto", sets displayNameFromDS, which
  // transformDFToTable does not read; its exemplar and heatmap steps take other frames.)
  const isTable = (df) => targets.find((t) => t.refId === df.refId)?.format === 'table';
  const other = frames.filter((df) => !isTable(df)).map(
      (df) => ({ ...df, meta: { ...df.meta, preferredVisualisationType: 'graph' } }));
  const series = [...other, ...transformDFToTable(frames.filter(isTable))];

  const transformations = panel.transformations ?? [];
  for (const t of transformations) {
    if (!t.disabled && !registered.has(t.id)) {
      cannotRun(`${where}: transformation "${t.id}" is not one of @grafana/data's ` +
                `standardTransformers (Grafana's app adds a few of its own): not checked here`);
    }
  }
  const tables = await new Promise((resolve, reject) => {
    transformDataFrame(transformations, series).subscribe({ next: resolve, error: reject });
  });
  log.push(`  transformations: ${transformations.map((t) => t.id).join(', ') || '(none)'}: ` +
           `${series.length} frames in, ${tables.length} out`);
  return { where, log, tables };
}

// --- What a table shows: its columns (display names) and rows.
function columns(frame) {
  return frame.fields.map((f) => getFieldDisplayName(f, frame));
}

function cell(value) {
  if (value === null || value === undefined) return '';
  return String(value).replace(/\|/g, '\\|');
}

function markdown(frame) {
  const names = columns(frame);
  const lines = [`| ${names.map(cell).join(' | ')} |`, `|${names.map(() => ' --- |').join('')}`];
  for (let row = 0; row < frame.length; row++) {
    lines.push(`| ${frame.fields.map((f) => cell(f.values[row])).join(' | ')} |`);
  }
  return lines.join('\n');
}

const empty = (v) => v === null || v === undefined || v === '' || Number.isNaN(v);

// --- Main.
const dashboard = JSON.parse(fs.readFileSync(dashboardFile, 'utf8'));
const allPanels = (panels) => panels.flatMap((p) => [p, ...allPanels(p.panels ?? [])]);
const tablePanels = allPanels(dashboard.panels ?? []).filter((p) => p.type === 'table');
// Every query of the run at one time, as every target of a Grafana panel is (the end of the
// dashboard's time range), so that rows of different queries have the same Time.
const time = (Date.now() / 1000).toFixed(3);
const selector = `{node=${JSON.stringify(nodeName)}}`;

// What the node has, straight from dxshim's series: its GPUs, the containers holding them, and
// each pod's reservation on each GPU.
const gpus = new Set(
    (await instantQuery(`dxshim_gpu_present${selector}`, time)).data.result.map((s) => s.metric.gpu));
const holderKey = (m) => `${m.namespace}/${m.pod}/${m.container} on ${m.gpu}`;
const holders = new Set((await instantQuery(`dxshim_container_gpu_info${selector}`, time))
                            .data.result.map((s) => holderKey(s.metric)));
const reservations = new Map();
for (const s of (await instantQuery(`dxshim_pod_gpu_memory_reserved_bytes${selector}`, time))
         .data.result) {
  reservations.set(`${s.metric.namespace}/${s.metric.pod} on ${s.metric.gpu}`, Number(s.value[1]));
}
console.log(`@grafana/data ${grafanaVersion} on Node.js ${process.version}; Prometheus ${promUrl}, ` +
            `node ${nodeName}, time ${time}: GPUs ${[...gpus].sort().join(', ') || '(none)'}; ` +
            `containers holding one: ${[...holders].sort().join(', ') || '(none)'}`);

const problems = [];
if (tablePanels.length === 0) problems.push('the dashboard has no table panel');
if (gpus.size === 0) problems.push(`Prometheus has no dxshim_gpu_present${selector}: nothing to check`);
for (const panel of tablePanels) {
  const { where, log, tables } = await panelTables(panel, time);
  console.log(`\n${where}:\n${log.join('\n')}`);
  tables.forEach((t, i) => console.log(
      `${tables.length > 1 ? `frame ${i + 1} of ${tables.length}, ` : ''}${t.length} rows:\n` +
      markdown(t)));
  const wrong = (what) => problems.push(`${where}: ${what}`);
  if (tables.length !== 1) {
    wrong(`${tables.length} frames after its transformations; the table panel shows one at a ` +
          `time, so they were not merged into one table`);
    continue;
  }
  const table = tables[0];
  const names = columns(table);
  const column = (name) => table.fields[names.indexOf(name)]?.values;
  for (let row = 0; row < table.length; row++) {
    const blanks = names.filter((n, i) => empty(table.fields[i].values[row]));
    if (blanks.length) wrong(`row ${row + 1} has no ${blanks.join(', ')}`);
  }
  const missing = (required) => required.filter((n) => !names.includes(n));
  if (names.includes('container')) {
    const reserved = names.find((n) => /reserv/i.test(n));
    const lacking = missing(['namespace', 'pod', 'container', 'gpu', 'luid']);
    if (!reserved) lacking.push('a memory reservation column (a name with "reserv")');
    if (lacking.length) {
      wrong(`no column ${lacking.join(', ')} (columns: ${names.join(', ')})`);
      continue;
    }
    const rows = new Map();
    for (let row = 0; row < table.length; row++) {
      const m = Object.fromEntries(['namespace', 'pod', 'container', 'gpu'].map(
          (n) => [n, column(n)[row] ?? '']));
      const key = holderKey(m);
      rows.set(key, [...(rows.get(key) ?? []), row]);
      const want = reservations.get(`${m.namespace}/${m.pod} on ${m.gpu}`);
      const got = column(reserved)[row];
      if (want === undefined) wrong(`row ${row + 1} (${key}): no such pod holds that GPU`);
      else if (got !== want) {
        wrong(`row ${row + 1} (${key}): ${reserved} ${cell(got) || '(empty)'}, but the pod ` +
              `reserved ${want}`);
      }
    }
    for (const key of holders) {
      const at = rows.get(key) ?? [];
      if (at.length !== 1) wrong(`${key}: ${at.length} rows, one expected`);
    }
    for (const key of rows.keys()) {
      if (!holders.has(key)) wrong(`${key}: a row for a container that holds no GPU`);
    }
  } else if (names.includes('gpu')) {
    const lacking = missing(['gpu', 'luid']);
    if (lacking.length) {
      wrong(`no column ${lacking.join(', ')} (columns: ${names.join(', ')})`);
      continue;
    }
    const rows = new Map();
    column('gpu').forEach((gpu, row) => rows.set(gpu, [...(rows.get(gpu) ?? []), row + 1]));
    for (const gpu of gpus) {
      const at = rows.get(gpu) ?? [];
      if (at.length !== 1) {
        wrong(`GPU ${gpu}: ${at.length} rows${at.length ? ` (${at.join(', ')})` : ''}, one expected`);
      }
    }
    for (const gpu of rows.keys()) {
      if (!gpus.has(gpu)) wrong(`GPU ${gpu}: a row for a GPU dxshim does not list`);
    }
  } else {
    wrong(`neither a gpu nor a container column (columns: ${names.join(', ')}): not checked`);
  }
}

console.log('');
for (const p of problems) console.log(`wrong: ${p}`);
console.log(problems.length ? `FAILED: ${problems.length} problems` :
                              `OK: ${tablePanels.length} table panels checked`);
process.exit(problems.length ? 1 : 0);
