// The Player page: draws the frames the session streams (binary: a JSON header, then RGBA8
// pixels), asks for the next one only once it has drawn the last (so a slow page misses frames
// instead of queueing them), and sends the person's pointer, keys, params and choices back.

const $ = (id) => document.getElementById(id);
const canvas = $('canvas');
const context = canvas.getContext('2d');

/** What tests and curious people can look at: the frame on the canvas and counts. */
const state = { frame: null, header: null, framesDrawn: 0, seen: [], scene: null, rejection: null, connected: false, recording: null, recorded: null, dropped: null, dropRefused: null, tierEvents: [], previewMode: false, preview: null, previewEnded: null };
window.player = state;

const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/player/socket`);
socket.binaryType = 'arraybuffer';
let nextId = 0;
const send = (message) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));
/** A protocol request (the same operations an agent sends). */
const request = (op, fields = {}) => send({ op, id: `page-${++nextId}`, ...fields });

socket.addEventListener('open', () => {
  state.connected = true;
  $('connection').textContent = 'live';
  send({ type: 'next' });
});
socket.addEventListener('close', () => {
  state.connected = false;
  $('connection').textContent = 'disconnected (the session ended?) — reconnecting when it is back…';
  $('connection').classList.add('lost');
  for (const id of ['play-pause', 'step', 'record']) $(id).disabled = true;
  // A Player started again on the same address: the page reloads into it (a new session: the
  // scene's values, what its file holds).
  const retry = () => fetch(location.href, { cache: 'no-store' }).then((r) => (r.ok ? location.reload() : setTimeout(retry, 2000)), () => setTimeout(retry, 2000));
  setTimeout(retry, 2000);
});

// -- frames --------------------------------------------------------------------------------------

let latest = null;
let drawing = false;
const drawTimes = [];

function onFrame(buffer) {
  latest = buffer;
  if (!drawing) {
    drawing = true;
    requestAnimationFrame(draw);
  }
}

function draw() {
  drawing = false;
  const buffer = latest;
  latest = null;
  if (!buffer) return;
  const view = new DataView(buffer);
  const length = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, length)));
  const pixels = new Uint8ClampedArray(buffer, 4 + length, header.width * header.height * 4);
  if (canvas.width !== header.width || canvas.height !== header.height) {
    canvas.width = header.width;
    canvas.height = header.height;
    fitCanvas();
  }
  context.putImageData(new ImageData(pixels, header.width, header.height), 0, 0);
  state.frame = header.frame;
  state.header = header;
  state.framesDrawn++;
  // A frame ran: a failure shown is over (a rejection stays until a change is published).
  if (state.failure && !state.rejection) hideRejection();
  state.seen.push(header.frame);
  if (state.seen.length > 600) state.seen.shift();
  const now = performance.now();
  drawTimes.push(now);
  while (drawTimes.length && drawTimes[0] < now - 1000) drawTimes.shift();
  $('frame').textContent = header.frame;
  $('fps').textContent = header.paused ? '0' : String(drawTimes.length);
  $('fps').title = `the engine made ${header.fps} frames in the last second; this page drew ${drawTimes.length}`;
  $('size').textContent = `${header.width}×${header.height}${header.depth ? ` (slice z=${header.slice} of ${header.depth})` : ''}`;
  showTimings(header.timings ?? []);
  // Drawn: now the next one (never more than one in flight).
  send({ type: 'next' });
}

// Frames drawn in the last second, also when none come (paused, or the session is gone).
setInterval(() => {
  const now = performance.now();
  while (drawTimes.length && drawTimes[0] < now - 1000) drawTimes.shift();
  $('fps').textContent = String(drawTimes.length);
}, 500);

function showTimings(timings) {
  if (!timings.length) return; // a cached or paused frame ran nothing: keep the last timings
  const body = $('timings').tBodies[0];
  body.replaceChildren(...timings.map((t) => {
    const row = document.createElement('tr');
    const name = document.createElement('td');
    name.textContent = t.fused ? `${t.node} (fused: ${t.fused.join(', ')})` : t.node;
    // The tier its module runs: fast until the optimised one arrives (docs/player.md).
    const tier = document.createElement('td');
    tier.className = `tier ${t.tier ?? ''}`;
    tier.textContent = t.tier ?? '';
    const ms = document.createElement('td');
    // A group nothing it reads changed for was not run: its picture is kept (docs/architecture.md, Reuse).
    ms.textContent = t.reused ? 'kept' : t.millis.toFixed(3);
    row.append(name, tier, ms);
    return row;
  }));
}

/**
 * Scale the canvas to fit the window, whole, keeping its aspect: as wide as the view allows and
 * no taller than the window below it (the status line under it stays in sight).
 */
function fitCanvas() {
  const top = canvas.getBoundingClientRect().top + window.scrollY;
  const width = Math.max(64, $('view').clientWidth);
  const height = Math.max(64, window.innerHeight - top - 72);
  const scale = Math.min(width / canvas.width, height / canvas.height);
  canvas.style.width = `${Math.max(1, Math.floor(canvas.width * scale))}px`;
  canvas.style.height = `${Math.max(1, Math.floor(canvas.height * scale))}px`;
}
window.addEventListener('resize', fitCanvas);

// -- messages ------------------------------------------------------------------------------------

socket.addEventListener('message', (event) => {
  if (typeof event.data !== 'string') return onFrame(event.data);
  const message = JSON.parse(event.data);
  if (message.type === 'scene') return showScene(message);
  if (message.type === 'rejected') return showRejection(message);
  if (message.type === 'published') {
    hideRejection();
    if (statusKind === 'notice') clearSay(); // "gone from disk" is over once a version of it runs
    return pausedNote();
  }
  if (message.type === 'frame-failed') return showFailure(message);
  if (message.type === 'error' || message.type === 'notice') return say(message.message, message.type);
  if (message.type === 'recording') return showRecording(message);
  if (message.type === 'dropped') {
    state.dropped = message;
    return say(`${message.file} is in input ${message.input} (${message.width}×${message.height})`);
  }
  if (message.type === 'drop-refused') {
    state.dropRefused = message;
    return say(`${message.file} was not taken: ${message.message}`);
  }
  if (message.type === 'recorded') return showRecorded(message);
  if (message.type === 'tier') return showTier(message);
  if (message.type === 'preview-mode') {
    state.previewMode = message.on;
    $('preview-mode').checked = message.on;
    return;
  }
  if (message.type === 'previewing') return say(`running your saved edit of ${message.paths.join(', ')} on a copy of the world…`, 'previewing');
  if (message.type === 'preview') return showPreview(message);
  // A protocol answer to a request of this page.
  if (message.error) {
    say(message.error.message, 'error');
    restoreParams();
  } else if (message.ok !== undefined && String(message.id).startsWith('page-')) {
    // This page's request went through: an error it had said is over.
    if (statusKind === 'error') clearSay();
    if (message.ok.name !== undefined && message.ok.value !== undefined) pausedNote(); // a param
  }
});

/** While paused nothing runs: a change shows at the next frame, which step or play makes. */
function pausedNote() {
  if (state.scene?.paused) say('paused: the change shows at the next frame — step, or play', 'paused');
}

/** A change went live on a tier, the optimised tier arrived, or its compile was given up. */
function showTier(m) {
  state.tierEvents.push(m);
  const nodes = (m.nodes ?? []).join(', ');
  const ms = typeof m.compile_ms === 'number' ? ` in ${Math.round(m.compile_ms)} ms` : '';
  const text =
    m.event === 'optimised' ? `optimised tier running${nodes ? ` for ${nodes}` : ''} (compiled${ms})`
    : m.event === 'optimise_abandoned' ? `optimised compile${nodes ? ` of ${nodes}` : ''} past its ${m.budget_ms} ms budget: the fast tier keeps running`
    : `live on the ${m.tier} tier (compiled${ms})${m.tier === 'fast' ? '; optimising in the background' : ''}`;
  $('tier-status').textContent = text;
}

let statusTimer;
/** What the status line says now: 'error', 'notice', 'paused', or '' (news). */
let statusKind = '';
function say(text, kind = '') {
  $('status').textContent = text;
  statusKind = kind;
  clearTimeout(statusTimer);
  statusTimer = setTimeout(clearSay, 6000);
}

function clearSay() {
  clearTimeout(statusTimer);
  $('status').textContent = '';
  statusKind = '';
}

function showRejection(r) {
  state.rejection = r;
  state.failure = null;
  // Before any frame, nothing runs: a scene that does not check at the start has no previous version.
  // The message says the previous version keeps running when it does: the title need not say it twice.
  const keeps = /the previous version keeps running/.test(r.message ?? '');
  showOverlay(state.framesDrawn ? (keeps ? 'change rejected' : 'change rejected — the previous version keeps running') : 'the scene does not check — nothing runs until it does: mend it and save', r);
}

/** A frame that failed (a loop out of fuel): the last good picture stays; the next frame drawn clears it. */
function showFailure(f) {
  state.failure = f;
  state.failuresTold = (state.failuresTold ?? 0) + 1;
  showOverlay('a frame failed — the last good picture stays; mend the kernel and save', f);
}

function showOverlay(title, r) {
  $('overlay-title').textContent = title;
  $('overlay-where').textContent = r.line !== undefined ? `${r.path ?? ''} line ${r.line}, column ${r.column}` : (r.path ?? '');
  $('overlay-message').textContent = r.message;
  $('overlay').hidden = false;
}

function hideRejection() {
  state.rejection = null;
  state.failure = null;
  $('overlay').hidden = true;
}

// -- recording -----------------------------------------------------------------------------------

$('record').addEventListener('click', () => send({ type: state.recording ? 'stop-recording' : 'record' }));

function showRecording(r) {
  state.recording = r;
  $('record').textContent = 'stop';
  $('record').classList.add('on');
  $('recording').textContent = `recording ${r.source} to ${r.file} (in the scene's folder)…`;
}

function showRecorded(r) {
  state.recording = null;
  state.recorded = r;
  $('record').textContent = 'record';
  $('record').classList.remove('on');
  $('recording').textContent = r.error ?? `${r.why ? `${r.why}; ` : ''}saved ${r.path} (${r.frames} frames, ${r.width}×${r.height})`;
}

// -- preview before publishing: a saved edit beside the running world -----------------------------

$('preview-mode').addEventListener('change', () => send({ type: 'preview-mode', on: $('preview-mode').checked }));
$('publish').addEventListener('click', () => state.preview && send({ type: 'publish-preview', id: state.preview.id }));
$('discard').addEventListener('click', () => state.preview && send({ type: 'discard-preview', id: state.preview.id }));

const png = (picture) => `data:image/png;base64,${picture.data}`;
const number = (x) => (x === 0 ? '0' : Math.abs(x) >= 0.01 ? x.toFixed(3).replace(/\.?0+$/, '') : x.toExponential(2));

/** A held saved edit (docs/player.md): per output the running picture, the edit's, where it changed, and how much. */
function showPreview(p) {
  if (p.id === null) {
    state.preview = null;
    state.previewEnded = p.why;
    $('preview').hidden = true;
    if (p.why !== 'rejected')
      say(p.why === 'published' ? 'the saved edit is published'
        : p.why === 'superseded' ? 'the held edit is over: the world runs what the file holds now (a newer save or a compose took it in)'
        : 'the saved edit was discarded: the running version stays (the file keeps your edit)');
    return;
  }
  state.preview = p;
  // The held edit is what the file holds now: an older save's rejection, and the wait, are over.
  hideRejection();
  if (statusKind === 'previewing') clearSay();
  const e = p.evaluation;
  $('preview-what').textContent = `your saved edit of ${p.paths.join(', ')} — not running yet; both pictures at frame ${e.frame}, t = ${number(e.time)} s`;
  // What else the edit would do (a state reset, a migration, a param's default moved...).
  const told = p.events.filter((ev) => ev.kind !== 'published' && ev.kind !== 'unrun');
  $('preview-events').replaceChildren(...told.map((ev) => {
    const li = document.createElement('li');
    li.textContent = [ev.kind, ev.node, ev.param, ev.message].filter((x) => typeof x === 'string').join(': ');
    return li;
  }));
  $('preview-outputs').replaceChildren(...e.outputs.map(previewOutput));
  $('preview').hidden = false;
  $('status').textContent = '';
}

function previewOutput(o) {
  const div = document.createElement('div');
  div.className = 'preview-output';
  div.dataset.output = o.name;
  const name = document.createElement('div');
  name.className = 'preview-name';
  name.textContent = `${o.name} (${o.width}×${o.height}${o.depth ? `×${o.depth}` : ''})`;
  const pictures = document.createElement('div');
  pictures.className = 'preview-pictures';
  const figure = (cls, picture, caption) => {
    if (!picture) return [];
    const f = document.createElement('figure');
    const img = Object.assign(document.createElement('img'), { className: cls, src: png(picture), alt: caption });
    f.append(img, Object.assign(document.createElement('figcaption'), { textContent: caption }));
    return [f];
  };
  pictures.append(...figure('before', o.before, 'running'), ...figure('now', o.thumbnail, 'with the edit'), ...figure('diff', o.diff?.image, 'where it changed (black: unchanged)'));
  const summary = document.createElement('div');
  summary.className = 'preview-summary';
  summary.textContent = diffText(o);
  div.append(name, pictures, summary);
  return div;
}

/** The diff in words: how many elements changed, where, and by how much. */
function diffText(o) {
  const d = o.diff;
  if (!d) return o.note ?? '';
  if (d.new_output || d.size_changed) return d.note;
  if (d.changed === 0) return `no element changed (${d.elements} compared)`;
  const b = d.box;
  const where = `x ${b.x}–${b.x + b.width - 1}, y ${b.y}–${b.y + b.height - 1}${b.depth ? `, z ${b.z}–${b.z + b.depth - 1}` : ''}`;
  const percent = (100 * d.changed) / d.elements;
  return `${d.changed} of ${d.elements} elements changed (${percent < 0.1 ? percent.toPrecision(1) : percent.toFixed(1)} %), within ${where}; largest change per component ${d.max.map(number).join(', ')}${d.not_finite ? `; ${d.not_finite} not finite` : ''}`;
}

// -- the scene: params, sources, nodes, pause ----------------------------------------------------

let paramShape = '';
let sourceShape = '';
let nodeShape = '';
let inputShape = '';

function showScene(scene) {
  state.scene = scene;
  $('scene-name').textContent = scene.entry;
  document.title = `${scene.entry} — Entelechy Player`;
  $('play-pause').textContent = scene.paused ? 'play' : 'pause';
  $('play-pause').dataset.paused = String(scene.paused);
  $('step').disabled = !scene.paused;
  if (!scene.paused && statusKind === 'paused') clearSay();

  const shape = JSON.stringify(scene.params.map((p) => [p.name, p.type, p.range, p.value.length]));
  if (shape !== paramShape) {
    paramShape = shape;
    buildParams(scene.params);
  }
  for (const p of scene.params) updateParam(p);

  const sources = JSON.stringify(scene.sources.map((s) => s.name));
  if (sources !== sourceShape) {
    sourceShape = sources;
    const select = $('source');
    const chosen = select.value;
    select.replaceChildren(...scene.sources.map((s) => {
      const option = document.createElement('option');
      option.value = s.name;
      option.textContent = s.kind === 'pinned' ? `${s.name} (pinned)` : s.name;
      return option;
    }));
    if (scene.sources.some((s) => s.name === chosen)) select.value = chosen;
    else if (chosen) send({ type: 'show', source: select.value });
  }

  // With several inputs the person says which one a dropped image fills; with one, it is that one.
  const inputs = JSON.stringify(scene.inputs.map((i) => i.name));
  if (inputs !== inputShape) {
    inputShape = inputs;
    const select = $('drop-into');
    const chosen = select.value;
    const none = Object.assign(document.createElement('option'), { value: '', textContent: 'choose…' });
    select.replaceChildren(none, ...scene.inputs.map((i) => Object.assign(document.createElement('option'), { value: i.name, textContent: i.name })));
    if (scene.inputs.some((i) => i.name === chosen)) select.value = chosen;
    $('drop-into-label').hidden = scene.inputs.length < 2;
  }

  const nodes = JSON.stringify([scene.nodes, scene.pins]);
  if (nodes !== nodeShape) {
    nodeShape = nodes;
    $('nodes').replaceChildren(...scene.nodes.map((name) => {
      const item = document.createElement('li');
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      box.checked = scene.pins.includes(name);
      box.dataset.node = name;
      box.addEventListener('change', () => request(box.checked ? 'pin' : 'unpin', { node: name }));
      label.append(box, ` ${name}`);
      item.append(label);
      return item;
    }));
  }
}

/** One slider (and a number box) per component; a range gives the slider's ends. */
function buildParams(params) {
  const box = $('params');
  if (!params.length) {
    box.innerHTML = '<p class="empty">none</p>';
    return;
  }
  box.replaceChildren(...params.map((p) => {
    const div = document.createElement('div');
    div.className = 'param';
    div.dataset.param = p.name;
    const title = document.createElement('div');
    title.className = 'name';
    title.innerHTML = `<span></span><span class="type"></span>`;
    title.children[0].textContent = p.name;
    title.children[1].textContent = p.range ? `${p.type} ${p.range.lo}..${p.range.hi}` : p.type;
    div.append(title);
    p.value.forEach((v, c) => {
      const lo = p.range ? p.range.lo : Math.min(0, v * 2, v - 1);
      const hi = p.range ? p.range.hi : Math.max(1, v * 2, v + 1);
      const step = p.integer ? 1 : (hi - lo) / 1000;
      const row = document.createElement('div');
      row.className = 'component';
      const slider = Object.assign(document.createElement('input'), { type: 'range', min: lo, max: hi, step, value: v });
      const number = Object.assign(document.createElement('input'), { type: 'number', step: p.integer ? 1 : 'any', value: v });
      if (p.range) Object.assign(number, { min: lo, max: hi });
      slider.dataset.component = number.dataset.component = String(c);
      const set = (value) => {
        const values = [...div.querySelectorAll('input[type=number]')].map((n) => Number(n.value));
        values[c] = value;
        request('param', { name: p.name, value: values.length === 1 ? values[0] : values });
      };
      slider.addEventListener('input', () => {
        number.value = slider.value;
        set(Number(slider.value));
      });
      number.addEventListener('change', () => {
        // An empty box was sent as 0; a refused value stayed in the box while the world kept its own.
        if (number.value.trim() === '' || !Number.isFinite(Number(number.value))) {
          say(`\`${p.name}\` takes a number: the box shows the value it has`);
          return restoreParams();
        }
        slider.value = number.value;
        set(Number(number.value));
      });
      row.append(slider, number);
      div.append(row);
    });
    return div;
  }));
}

/** Every param's boxes back to the values the session holds (a value it refused is not one). */
function restoreParams() {
  for (const p of state.scene?.params ?? []) updateParam(p, true);
}

/** The value as the session holds it (another page or an agent may have set it); not while typed in, unless `force`. */
function updateParam(p, force = false) {
  const div = document.querySelector(`.param[data-param="${CSS.escape(p.name)}"]`);
  if (!div || (!force && div.contains(document.activeElement))) return;
  div.querySelectorAll('input').forEach((input) => {
    const v = p.value[Number(input.dataset.component)];
    if (Number(input.value) !== v) input.value = v;
  });
}

$('source').addEventListener('change', () => send({ type: 'show', source: $('source').value }));
$('play-pause').addEventListener('click', () => request('pause', { paused: !(state.scene?.paused ?? false) }));
$('step').addEventListener('click', () => {
  if (statusKind === 'paused') clearSay();
  send({ type: 'step' });
});

// -- a dropped image fills an input ---------------------------------------------------------------

const stage = $('stage');
stage.addEventListener('dragover', (e) => {
  e.preventDefault();
  stage.classList.add('dropping');
});
stage.addEventListener('dragleave', () => stage.classList.remove('dropping'));
stage.addEventListener('drop', async (e) => {
  e.preventDefault();
  stage.classList.remove('dropping');
  const file = [...(e.dataTransfer?.files ?? [])][0];
  if (!file) return say('drop an image file (PNG or JPEG)');
  const bytes = new Uint8Array(await file.arrayBuffer());
  // Base64 in pieces: String.fromCharCode takes only so many arguments at once.
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  const input = $('drop-into').value || undefined;
  send({ type: 'drop', name: file.name, data: btoa(binary), ...(input ? { input } : {}) });
});

// -- the person's pointer and keys ---------------------------------------------------------------

const pointer = { x: -1, y: -1, down: false };
const keys = new Set();

/** Canvas pixels to field elements: the canvas is the field, scaled to fit the window. */
function toElement(event) {
  const rect = canvas.getBoundingClientRect();
  pointer.x = ((event.clientX - rect.left) / rect.width) * canvas.width;
  pointer.y = ((event.clientY - rect.top) / rect.height) * canvas.height;
}
const sendInput = () => send({ type: 'input', pointer, keys: [...keys] });

canvas.addEventListener('pointerdown', (e) => {
  canvas.setPointerCapture(e.pointerId);
  canvas.focus();
  toElement(e);
  pointer.down = true;
  sendInput();
});
canvas.addEventListener('pointermove', (e) => {
  toElement(e);
  sendInput();
});
const lift = (e) => {
  toElement(e);
  pointer.down = false;
  sendInput();
};
canvas.addEventListener('pointerup', lift);
canvas.addEventListener('pointercancel', lift);

/** Key names as kernels read them (`keys.space`, `keys.a`, `keys.arrowup`, `keys.shift`). */
const keyName = (e) => (e.key === ' ' ? 'space' : e.key.toLowerCase());
const typing = (e) => e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
window.addEventListener('keydown', (e) => {
  if (typing(e) || e.repeat) return;
  keys.add(keyName(e));
  sendInput();
});
window.addEventListener('keyup', (e) => {
  if (typing(e)) return;
  keys.delete(keyName(e));
  sendInput();
});
window.addEventListener('blur', () => {
  keys.clear();
  sendInput();
});
