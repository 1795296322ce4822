// A minimal client of the agent protocol over WebSocket, to copy: connect, send request lines,
// show each answer (an image for a PNG `read`). Nothing here is specific to this page but the DOM.

const $ = (id) => document.getElementById(id);
// Served by a session (the Player serves this page at /bridges/web/): talk to that one.
// Opened as a file: ask for the address (`entelechy serve scene.esn --listen 127.0.0.1:7788`).
const params = new URLSearchParams(location.search);
$('address').value = params.get('server') ?? (location.host ? `ws://${location.host}/` : 'ws://127.0.0.1:7788/');

let socket = null;
let nextId = 0;

function connect() {
  socket?.close();
  socket = new WebSocket($('address').value);
  $('state').textContent = 'connecting…';
  socket.addEventListener('open', () => ($('state').textContent = 'connected'));
  // A refused or failed connection fires error, then close: the close keeps the error's words.
  let opened = false;
  socket.addEventListener('open', () => (opened = true));
  socket.addEventListener('close', (event) => ($('state').textContent = opened ? `closed${event.code === 1000 ? '' : ` (${event.code}${event.reason ? `: ${event.reason}` : ''})`}` : 'could not connect (is the session listening? is this origin allowed? `--allow-origin` names it)'));
  socket.addEventListener('message', (event) => show(String(event.data)));
}

/** Send one request; an id is added when it has none, so answers can be matched. */
function send(text) {
  let request;
  try {
    request = JSON.parse(text);
  } catch (e) {
    return log(`not JSON: ${e.message}`, 'error');
  }
  if (request.id === undefined) request.id = ++nextId;
  if (socket?.readyState !== WebSocket.OPEN) return log('not connected', 'error');
  const line = JSON.stringify(request);
  socket.send(line);
  log(`→ ${line}`, 'sent');
}

function show(line) {
  let answer;
  try {
    answer = JSON.parse(line);
  } catch {
    return log(`← ${line}`);
  }
  const item = log(`← ${abbreviate(line)}`, answer.error ? 'error' : 'answer');
  item.dataset.id = String(answer.id);
  if (answer.ok?.format === 'png' && answer.ok.data) {
    const img = document.createElement('img');
    img.alt = `${answer.ok.name} frame ${answer.ok.frame}`;
    img.src = `data:image/png;base64,${answer.ok.data}`;
    item.append(img);
  }
}

/** Long base64 data would fill the page: show its start. */
function abbreviate(line) {
  return line.replace(/"data":"([^"]{60})[^"]*"/g, (_, start) => `"data":"${start}…"`);
}

function log(text, kind = '') {
  const item = document.createElement('li');
  item.className = kind;
  item.textContent = text;
  $('log').prepend(item);
  return item;
}

$('connect').addEventListener('click', connect);
$('send').addEventListener('click', () => send($('request').value));
$('request').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && e.ctrlKey) send($('request').value);
});
for (const button of document.querySelectorAll('[data-request]'))
  button.addEventListener('click', () => {
    $('request').value = button.dataset.request;
    send(button.dataset.request);
  });
connect();
